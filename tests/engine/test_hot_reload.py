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


def inotify_instances() -> int:
    """This process's inotify instances, as /proc lists its descriptors."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += "inotify" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
    return count


def test_every_workspace_s_config_is_watched_through_one_inotify_instance(tmp_path: Path) -> None:
    """A user has 128 inotify instances for all their programs: a daemon with many workspaces
    open must not take one each."""
    before = inotify_instances()
    engine = Engine(tmp_path / "state", watch=True, checkpoints=False)
    try:
        spaces = [engine.workspace(make_workspace(tmp_path / f"ws{n}", make_intent(f"INT-{n}")))
                  for n in range(6)]
        assert inotify_instances() - before == 1
        last = spaces[-1]
        intents = last.root / ".orchestration" / "active_intents.yaml"
        save_like_an_editor(intents, intents.read_text().replace("INT-5", "INT-55"))
        wait_for(lambda: last.config.intents.get("INT-55") is not None)
    finally:
        engine.close()
    assert inotify_instances() == before, "closing the engine gives it back"


def test_an_orchestration_folder_moved_away_and_made_again_is_watched(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", make_intent("FIRST"))
    engine = Engine(tmp_path / "state", watch=True, checkpoints=False)
    try:
        workspace = engine.workspace(root)
        os.rename(root / ".orchestration", tmp_path / "old-orchestration")
        wait_for(lambda: workspace.config.intents.intents == ())
        make_workspace(root, make_intent("SECOND"))
        wait_for(lambda: workspace.config.intents.get("SECOND") is not None)
        intents = root / ".orchestration" / "active_intents.yaml"
        save_like_an_editor(intents, intents.read_text().replace("SECOND", "THIRD"))
        wait_for(lambda: workspace.config.intents.get("THIRD") is not None)
        # the folder moved away is no longer watched: writing it changes nothing here
        moved = tmp_path / "old-orchestration" / "active_intents.yaml"
        moved.write_text(moved.read_text().replace("FIRST", "FOURTH"))
        time.sleep(0.5)
        assert workspace.config.intents.get("THIRD") is not None
        assert workspace.config.intents.get("FOURTH") is None
    finally:
        engine.close()


# Runs in a user namespace whose inotify watch limit is 1: the workspace root takes it.
NO_WATCH_LEFT = """
import json, sys
from pathlib import Path
with open("/proc/sys/user/max_inotify_watches", "w") as handle:
    handle.write("1")
from intentd.daemon.engine.engine import Engine
engine = Engine(Path(sys.argv[2]), watch=True, checkpoints=False)
try:
    engine.workspace(Path(sys.argv[1]))
    out = {"opened": True}
except OSError as exc:
    out = {"opened": False, "error": str(exc), "known": list(engine.workspaces)}
finally:
    engine.close()
print(json.dumps(out))
"""


def test_a_workspace_whose_config_cannot_be_watched_is_not_opened(tmp_path: Path) -> None:
    """Unwatched, the person's edit that narrows a scope would never reach the daemon: the
    workspace is refused, and not left half open for the next call."""
    from tests.checkpoints.test_watch_limits import in_namespace

    root = make_workspace(tmp_path / "ws", make_intent("INT-1"))
    out = in_namespace(str(root), str(tmp_path / "state"), script=NO_WATCH_LEFT)
    assert out["opened"] is False and out["known"] == []
    assert "cannot watch" in str(out["error"]) and "max_user_watches" in str(out["error"])
