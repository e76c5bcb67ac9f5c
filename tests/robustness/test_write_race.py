"""Folders swapped (for a symlink, or by renames) while a pre-hook runs: the write lands in the
folder that was checked, held open since the check, never through what took its place."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.engine import Engine, Outcome
from intentd.daemon.testing import make_intent, make_session, make_workspace

INTENTS = ".orchestration/active_intents.yaml"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    started = tmp_path / "hook-started"
    return make_workspace(tmp_path / "ws", make_intent(owned_scope=["src/**"]), policy={
        "auto_approve": {"edit": True},
        "hooks": {"pre_tool": [{"command": f"touch {started}; sleep 1", "timeout": 10,
                                "matcher": "write_to_file|replace_in_file"}]}},
        files={"src/sub/active_intents.yaml": "active_intents: []\n", "src/sub/deep/x.txt": "x\n",
               "src/file.txt": "f\n"})


def run_racing(engine: Engine, ws: Path, tool: str, args: dict[str, Any],
               swap: Any) -> Outcome:
    """Run the call; as soon as its pre-hook starts, `swap` changes the tree under it."""
    session = make_session(engine, ws)
    engine.run(engine.evaluate(session, "select_active_intent", {"intent_id": "INT-1"}), "auto")
    engine.run(engine.evaluate(session, "read_file", {"path": args["path"]}), "auto")
    ev = engine.evaluate(session, tool, args)
    assert ev.decision.allowed, ev.decision
    box: list[Outcome] = []
    worker = threading.Thread(target=lambda: box.append(engine.run(ev, "auto")))
    worker.start()
    started = ws.parent / "hook-started"
    deadline = time.monotonic() + 10
    while not started.exists():
        assert time.monotonic() < deadline, "the pre-hook never started"
        time.sleep(0.01)
    swap()
    worker.join(20)
    return box[0]


def swap_folder(ws: Path, folder: str) -> Any:
    def swap() -> None:
        os.rename(ws / folder, ws / f"{folder}.old")
        os.symlink(os.path.relpath(ws / ".orchestration", (ws / folder).parent), ws / folder)
    return swap


@pytest.mark.parametrize(("tool", "args"), [
    ("write_to_file", {"path": "src/sub/active_intents.yaml", "content": "hacked: []\n"}),
    ("replace_in_file", {"path": "src/sub/active_intents.yaml", "old_str": "active_intents:",
                         "new_str": "hacked:"}),
])
def test_a_folder_swapped_for_a_symlink_is_not_followed(engine: Engine, ws: Path, tool: str,
                                                        args: dict[str, Any]) -> None:
    before = (ws / INTENTS).read_text()
    outcome = run_racing(engine, ws, tool, args, swap_folder(ws, "src/sub"))
    assert (ws / INTENTS).read_text() == before, "the protected file is untouched"
    assert outcome.result is not None and outcome.result.ok, "it wrote where it was checked"
    assert (ws / "src" / "sub.old" / "active_intents.yaml").read_text() == "hacked: []\n"


def test_a_new_file_below_a_swapped_folder_is_not_created_there(engine: Engine, ws: Path) -> None:
    outcome = run_racing(engine, ws, "write_to_file",
                         {"path": "src/sub/deep/new/policy.yaml", "content": "x"},
                         swap_folder(ws, "src/sub"))
    assert not (ws / ".orchestration" / "deep").exists()
    assert outcome.result is not None and outcome.result.ok
    assert (ws / "src" / "sub.old" / "deep" / "new" / "policy.yaml").read_text() == "x"


def test_a_file_swapped_for_a_symlink_is_not_written_through(engine: Engine, ws: Path) -> None:
    before = (ws / INTENTS).read_text()

    def swap() -> None:
        os.unlink(ws / "src" / "file.txt")
        os.symlink(ws / INTENTS, ws / "src" / "file.txt")

    outcome = run_racing(engine, ws, "write_to_file", {"path": "src/file.txt", "content": "x"}, swap)
    assert (ws / INTENTS).read_text() == before
    assert outcome.result is not None and not outcome.result.ok
    assert "changed since it was checked" in outcome.result.output


def test_a_folder_renamed_away_keeps_the_write_it_was_checked_for(engine: Engine, ws: Path) -> None:
    """Real folders renamed under the call (no symlink at all): the protected folder moved into
    the checked place, and back afterwards. The write goes to the folder that was checked."""
    before = (ws / INTENTS).read_text()

    def swap() -> None:
        os.rename(ws / "src" / "sub", ws / "src" / "sub.old")
        os.rename(ws / ".orchestration", ws / "src" / "sub")

    outcome = run_racing(engine, ws, "write_to_file",
                         {"path": "src/sub/active_intents.yaml", "content": "hacked: []\n"}, swap)
    os.rename(ws / "src" / "sub", ws / ".orchestration")
    assert (ws / INTENTS).read_text() == before, "the protected file is untouched"
    assert outcome.result is not None and outcome.result.ok
    assert (ws / "src" / "sub.old" / "active_intents.yaml").read_text() == "hacked: []\n"


def test_a_read_never_follows_a_folder_swapped_for_a_symlink_to_an_ignored_one(
        tmp_path: Path, engine: Engine) -> None:
    """Reads take the same held-folder path: the swap cannot make read_file return a file the
    ignore rules keep from the agent."""
    started = tmp_path / "hook-started"
    ws = make_workspace(tmp_path / "ws", make_intent(owned_scope=["src/**"]), policy={
        "hooks": {"pre_tool": [{"command": f"touch {started}; sleep 1", "timeout": 10,
                                "matcher": "read_file"}]}},
        files={"src/sub/notes.txt": "public\n", "secrets/notes.txt": "SECRET\n",
               ".orchestration/ignore": "secrets/\n"})
    session = make_session(engine, ws)
    ev = engine.evaluate(session, "read_file", {"path": "src/sub/notes.txt"})
    assert ev.decision.allowed, ev.decision
    box: list[Outcome] = []
    worker = threading.Thread(target=lambda: box.append(engine.run(ev, "auto")))
    worker.start()
    deadline = time.monotonic() + 10
    while not started.exists():
        assert time.monotonic() < deadline, "the pre-hook never started"
        time.sleep(0.01)
    os.rename(ws / "src" / "sub", ws / "src" / "sub.old")
    os.symlink(ws / "secrets", ws / "src" / "sub")
    worker.join(20)
    result = box[0].result
    assert result is not None
    assert "SECRET" not in result.output, "the ignored file was read through the swapped link"
    assert not result.ok and "changed since it was checked" in result.output
