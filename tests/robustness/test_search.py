"""search_files: linear-time regexes, time and size limits, and no symlink followed out of bounds."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import make_intent, make_session, make_workspace
from intentd.daemon.tools import listing


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), files={
        "src/a.py": "token = 1\n" + "a" * 400 + "!\n", "src/b.py": "x\n",
        ".orchestration/ignore": "secrets/\n", "secrets/key.txt": "token = SECRET\n"})


@pytest.fixture
def session(engine: Engine, ws: Path) -> Any:
    s = make_session(engine, ws)
    engine.run(engine.evaluate(s, "select_active_intent", {"intent_id": "INT-1"}), "test")
    return s


def search(engine: Engine, session: Any, **args: Any) -> Any:
    ev = engine.evaluate(session, "search_files", args)
    assert ev.decision.verdict.value != "deny", ev.decision
    return engine.run(ev, approved_by="test").result


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"no answer within {seconds} s"
    return box[0]


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"(\w+\s?)+$", r"^(a|a?)+$"])
def test_a_catastrophic_regex_answers_at_once(engine: Engine, session: Any, pattern: str) -> None:
    result = within(5, lambda: search(engine, session, regex=pattern))
    assert result.ok


def test_backreferences_and_lookaround_are_refused_clearly(engine: Engine, session: Any) -> None:
    for pattern in (r"(\w)\1", r"foo(?=bar)", r"(?<!x)y"):
        result = search(engine, session, regex=pattern)
        assert not result.ok and "not supported" in result.output and "RE2" in result.output


def test_a_search_stops_at_its_time_and_size_limits(engine: Engine, session: Any, ws: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(20):
        (ws / "src" / f"gen{index:02}.py").write_text("token = 2\n")
    monkeypatch.setattr(listing, "SEARCH_TOTAL_BYTES", 30)
    result = search(engine, session, regex="token")
    assert result.ok and "stopped after reading" in result.output
    assert len(result.output.splitlines()) < 10
    monkeypatch.setattr(listing, "SEARCH_TOTAL_BYTES", 1 << 30)
    monkeypatch.setattr(listing, "SEARCH_SECONDS", 0.0)
    result = search(engine, session, regex="token")
    assert result.ok and "stopped after" in result.output and "narrow the search" in result.output


def test_a_match_never_spans_lines(engine: Engine, session: Any, ws: Path) -> None:
    (ws / "src" / "c.py").write_text("foo\nbar\nfoo  bar\n")
    result = search(engine, session, regex=r"foo\s+bar", file_pattern="c.py")
    assert result.output == "src/c.py:3: foo  bar"


def test_symlinks_to_ignored_or_external_files_are_not_followed(engine: Engine, session: Any,
                                                                ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("token = OUTSIDE\n")
    (ws / "src" / "leak.py").symlink_to(ws / "secrets" / "key.txt")
    (ws / "src" / "out.py").symlink_to(outside)
    (ws / "src" / "dir").symlink_to(ws / "secrets")
    result = search(engine, session, regex="token")
    assert "SECRET" not in result.output and "OUTSIDE" not in result.output
    assert result.output == "src/a.py:1: token = 1"
    refused = engine.evaluate(session, "read_file", {"path": "src/leak.py"})
    assert refused.decision.verdict.value == "deny", "read_file refuses the same path"


def test_file_names_that_are_not_utf8_are_shown_and_recorded(engine: Engine, session: Any,
                                                             ws: Path) -> None:
    with open(os.path.join(os.fsencode(ws / "src"), b"bad\xff.py"), "w") as handle:
        handle.write("token = 3\n")
    for tool, args in (("list_files", {"path": "src"}), ("search_files", {"regex": "token = 3"})):
        ev = engine.evaluate(session, tool, args)
        result = engine.run(ev, approved_by="test").result
        assert result.ok and "src/bad\ufffd.py" in result.output


def test_a_file_given_as_the_folder_is_named_as_such(engine: Engine, session: Any) -> None:
    for tool, args in (("list_files", {"path": "src/a.py"}),
                       ("search_files", {"regex": "x", "path": "src/a.py"})):
        ev = engine.evaluate(session, tool, args)
        result = engine.run(ev, approved_by="test").result
        assert not result.ok and "is not a folder" in result.output
