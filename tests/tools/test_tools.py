"""Every tool run through the engine on real files and a real shell."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.engine import Engine, Outcome
from intentd.daemon.testing import make_intent, make_session, make_workspace
from intentd.daemon.tools import fileio, listing
from intentd.daemon.tools.base import ToolContext, ToolFailed
from intentd.daemon.tools.files import replace_in_file, write_to_file
from intentd.daemon.tools.registry import anthropic_tools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), files={
        "notes.txt": "one\ntwo\nthree\nfour\n", "src/a.py": "x = 1\ny = 2\nx = 1\n",
        "src/b.py": "print('hello')\n", ".orchestration/ignore": "hidden/\n",
        "hidden/secret.txt": "hello secret\n"})


def run(engine: Engine, session: Any, tool: str, **args: Any) -> Any:
    ev = engine.evaluate(session, tool, args)
    assert ev.decision.verdict.value != "deny", ev.decision
    outcome: Outcome = engine.run(ev, approved_by="test")
    assert outcome.result is not None
    return outcome.result


@pytest.fixture
def session(engine: Engine, ws: Path) -> Any:
    s = make_session(engine, ws)
    run(engine, s, "select_active_intent", intent_id="INT-1")
    return s


def test_read_file_whole_and_by_line_range(engine: Engine, session: Any) -> None:
    assert run(engine, session, "read_file", path="notes.txt").output == "one\ntwo\nthree\nfour\n"
    out = run(engine, session, "read_file", path="notes.txt", start_line=2, end_line=3)
    assert out.output == "two\nthree\n"


def test_read_file_size_cap_and_binary_give_clear_errors(engine: Engine, session: Any, ws: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileio, "READ_CAP_BYTES", 10)
    (ws / "big.txt").write_text("x" * 11)
    result = run(engine, session, "read_file", path="big.txt")
    assert not result.ok and "read cap" in result.output and "start_line" in result.output
    (ws / "bin.dat").write_bytes(b"\x00\x01\x02")
    result = run(engine, session, "read_file", path="bin.dat")
    assert not result.ok and "binary" in result.output
    result = run(engine, session, "read_file", path="missing.txt")
    assert not result.ok and "not found" in result.output


def test_write_creates_parents_atomically_and_keeps_the_mode(engine: Engine, session: Any,
                                                             ws: Path) -> None:
    result = run(engine, session, "write_to_file", path="deep/er/new.txt", content="hi")
    assert result.ok and (ws / "deep/er/new.txt").read_text() == "hi"
    script = ws / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    run(engine, session, "read_file", path="run.sh")
    assert run(engine, session, "write_to_file", path="run.sh", content="new").ok
    assert script.read_text() == "new" and os.stat(script).st_mode & 0o777 == 0o755
    assert not [p for p in ws.rglob(".intentd-*")], "no temp file left behind"


def test_replace_in_file_several_edits_all_or_nothing(engine: Engine, session: Any, ws: Path) -> None:
    run(engine, session, "read_file", path="src/a.py")
    result = run(engine, session, "replace_in_file", path="src/a.py",
                 edits=[{"old_str": "y = 2", "new_str": "y = 3"},
                        {"old_str": "x = 1", "new_str": "x = 9"}])
    assert not result.ok and "found 2 times" in result.output
    assert (ws / "src/a.py").read_text() == "x = 1\ny = 2\nx = 1\n", "nothing applied"
    result = run(engine, session, "replace_in_file", path="src/a.py",
                 edits=[{"old_str": "y = 2", "new_str": "y = 3"},
                        {"old_str": "x = 1\ny", "new_str": "x = 0\ny"}])
    assert result.ok and (ws / "src/a.py").read_text() == "x = 0\ny = 3\nx = 1\n"
    result = run(engine, session, "replace_in_file", path="src/a.py", old_str="zzz", new_str="")
    assert not result.ok and "not found" in result.output


def test_the_sessions_own_write_is_not_stale(engine: Engine, session: Any) -> None:
    run(engine, session, "write_to_file", path="fresh.txt", content="a")
    ev = engine.evaluate(session, "replace_in_file", {"path": "fresh.txt", "old_str": "a",
                                                      "new_str": "b"})
    assert ev.decision.verdict.value == "ask"


def test_list_files_hides_ignored_and_git_and_caps(engine: Engine, session: Any, ws: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref")
    out = run(engine, session, "list_files", recursive=True).output.splitlines()
    assert "src/" in out and "src/a.py" in out and "notes.txt" in out
    assert not [line for line in out if "hidden" in line or ".git/" in line]
    assert "src/a.py" not in run(engine, session, "list_files").output
    monkeypatch.setattr(listing, "LIST_CAP", 2)
    out = run(engine, session, "list_files", path=".", recursive=True).output
    assert out.splitlines()[2] == "... (capped at 2 entries: list a subfolder)"


def test_search_files_regex_glob_cap_and_ignored(engine: Engine, session: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    out = run(engine, session, "search_files", regex=r"x = \d", file_pattern="*.py").output
    assert out.splitlines() == ["src/a.py:1: x = 1", "src/a.py:3: x = 1"]
    assert run(engine, session, "search_files", regex="hello").output == "src/b.py:1: print('hello')"
    bad = run(engine, session, "search_files", regex="(unclosed")
    assert not bad.ok and "regex is not valid" in bad.output
    monkeypatch.setattr(listing, "SEARCH_CAP", 1)
    assert "capped at 1" in run(engine, session, "search_files", regex="x").output


def test_execute_command_exit_code_cwd_and_output(engine: Engine, session: Any) -> None:
    result = run(engine, session, "execute_command", command="pwd; echo err >&2; exit 3", cwd="src")
    assert not result.ok and result.data["exit_code"] == 3
    assert result.output.splitlines()[0].endswith("/ws/src") and "err" in result.output


def test_execute_command_timeout_kills_the_whole_group(engine: Engine, session: Any,
                                                       ws: Path) -> None:
    result = run(engine, session, "execute_command",
                 command="(sleep 2; touch src/late.txt) & sleep 30", timeout=1)
    assert result.data["timed_out"] and "timed out after 1 s" in result.output
    assert result.data["seconds"] < 10
    time.sleep(2.5)  # past the moment the background child would have written, in scope
    assert not (ws / "src" / "late.txt").exists(), "the background child outlived the timeout"


def test_execute_command_output_is_capped(engine: Engine, session: Any) -> None:
    result = run(engine, session, "execute_command",
                 command="head -c 300000 /dev/zero | tr '\\0' a; echo END")
    assert result.data["output_bytes"] == 300004
    assert "bytes of output dropped" in result.output and "END" in result.output
    assert len(result.output) < 70_000


def test_select_returns_the_intent_context(engine: Engine, ws: Path) -> None:
    session = make_session(engine, ws)
    out = run(engine, session, "select_active_intent", intent_id="INT-1").output
    assert out.startswith("<intent_context>") and "owned_scope:\n  - **" in out


def test_tools_export_as_anthropic_schemas() -> None:
    tools = {t["name"]: t for t in anthropic_tools()}
    assert set(tools) >= {"read_file", "write_to_file", "replace_in_file", "list_files",
                          "search_files", "execute_command", "select_active_intent",
                          "ask_followup_question", "attempt_completion"}
    for tool in tools.values():
        assert tool["input_schema"]["type"] == "object" and tool["description"]
    assert tools["replace_in_file"]["input_schema"]["properties"]["edits"]["type"] == "array"


def test_git_refuses_a_planted_bare_repository(engine: Engine, session: Any, ws: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", "--bare", str(ws / "src" / "planted")], check=True)
    result = run(engine, session, "execute_command", command="git log", cwd="src/planted")
    assert not result.ok and "safe.bareRepository" in result.output


def test_an_approved_edit_writes_over_the_file_shown_or_nothing(ws: Path) -> None:
    """The last check, in the tool as it writes: the engine's own check runs a checkpoint
    earlier, and the agent may change the file in between."""
    target = ws / "src" / "a.py"
    target.write_text("flag = True\n")
    shown = {str(target): fileio.sha256_file(str(target))}
    ctx = ToolContext(root=str(ws), paths=(str(target),), cwd=str(ws),
                      intents_lookup=lambda _: None, is_ignored=lambda _: False, shown=shown)
    target.write_text("flag = True\nauth = True\n")  # after the diff was made
    edit = {"path": "src/a.py", "old_str": "True", "new_str": "False"}
    for tool, args in ((replace_in_file, edit), (write_to_file, {"path": "src/a.py", "content": ""})):
        with pytest.raises(ToolFailed, match="changed after the person was shown the diff"):
            tool(ctx, args)
    assert target.read_text() == "flag = True\nauth = True\n"
    target.write_text("flag = True\n")  # as shown again: the edit goes ahead
    assert replace_in_file(ctx, edit).ok and target.read_text() == "flag = False\n"
