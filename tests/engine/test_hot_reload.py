"""Live reload of the intents file, as editors really save it (temp file renamed over the target)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import decide, make_intent, make_session, make_workspace


def save_like_an_editor(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.swp")
    temp.write_text(text)
    os.replace(temp, path)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_edits_are_picked_up_bad_edits_keep_the_last_good_intents(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", make_intent("INT-1"))
    engine = Engine(tmp_path / "state", watch=True, checkpoints=False)
    try:
        session = make_session(engine, root)
        workspace = session.workspace
        intents_file = root / ".orchestration" / "active_intents.yaml"
        good = intents_file.read_text()
        assert decide(engine, session, "select_active_intent", intent_id="INT-1").decision.allowed

        save_like_an_editor(intents_file, "active_intents:\n  - id: [broken\n")
        wait_for(lambda: workspace.config.intents_error is not None)
        error = workspace.config.intents_error
        assert error is not None and error.line == 3 and str(intents_file) in str(error)
        assert workspace.config.intents.get("INT-1") is not None, "last good intents stay"

        save_like_an_editor(intents_file, good.replace("INT-1", "INT-2"))
        wait_for(lambda: workspace.config.intents_error is None)
        assert [i.id for i in workspace.config.intents.intents] == ["INT-2"]
        ev = decide(engine, session, "write_to_file", path="src/x.py", content="")
        assert ev.decision.stage == "intent_gate" and "'INT-1' is not listed" in ev.decision.reason
    finally:
        engine.close()


def test_the_orchestration_folder_created_later_is_watched(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    engine = Engine(tmp_path / "state", watch=True, checkpoints=False)
    try:
        workspace = engine.workspace(root)
        assert workspace.config.intents.intents == ()
        make_workspace(root, make_intent("LATE"))
        wait_for(lambda: workspace.config.intents.get("LATE") is not None)
        (root / ".orchestration" / "policy.yaml").write_text("repetition: {limit: -1}\n")
        wait_for(lambda: workspace.config.policy_error is not None)
        assert "repetition.limit must be ≥ 0" in str(workspace.config.policy_error)
        assert workspace.config.policy.commands.default == "deny", "safest defaults in force"
    finally:
        engine.close()


def test_ignore_rules_are_reloaded(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", files={"notes.txt": "n"})
    engine = Engine(tmp_path / "state", watch=True, checkpoints=False)
    try:
        session = make_session(engine, root)
        assert decide(engine, session, "read_file", path="notes.txt").decision.allowed
        (root / ".rooignore").write_text("notes.txt\n")
        wait_for(lambda: session.workspace.config.ignore.ignores("notes.txt"))
        assert decide(engine, session, "list_files").decision.allowed
        assert decide(engine, session, "read_file", path="notes.txt").decision.stage == "access"
    finally:
        engine.close()
