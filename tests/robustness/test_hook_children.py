"""A pre-hook that leaves a background child: vetoed on timeout, and the child is killed too."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import make_intent, make_session, make_workspace


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: it only waits for its parent to reap it
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def wait_gone(pid: int, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize(("hook", "stage"), [
    # the hook itself hangs: vetoed on timeout
    ("sleep 60 & echo $! > {pid}; sleep 60", "timed out"),
    # the hook answers, but its child keeps the output pipe open: still a timeout
    ("sleep 60 & echo $! > {pid}; echo '{{}}'", "timed out"),
    # the hook answers and its child lets go of the pipes: allowed, but the child is killed
    ("sleep 60 >/dev/null 2>&1 </dev/null & echo $! > {pid}", None),
    # a child that leaves the group but keeps the pipe: the hook still ends on time (the child
    # itself is beyond reach of a group kill; the hook is vetoed)
    ("sleep 60 & echo $! > {pid}; setsid sleep 8 & sleep 60", "timed out"),
])
def test_a_hooks_background_child_does_not_outlive_it(tmp_path: Path, engine: Engine, hook: str,
                                                       stage: str | None) -> None:
    pid_file = tmp_path / "child.pid"
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy={
        "auto_approve": {"edit": True},
        "hooks": {"pre_tool": [{"command": hook.format(pid=pid_file), "timeout": 1,
                                "matcher": "write_to_file"}]}})
    session = make_session(engine, root)
    engine.run(engine.evaluate(session, "select_active_intent", {"intent_id": "INT-1"}), "auto")
    started = time.monotonic()
    outcome = engine.run(engine.evaluate(session, "write_to_file", {"path": "a.txt",
                                                                     "content": "x"}), "auto")
    assert time.monotonic() - started < 5, "the hook's timeout held"
    if stage is None:
        assert outcome.result is not None and outcome.result.ok
    else:
        assert outcome.decision.stage == "pre_hook" and stage in outcome.decision.reason
        assert not (root / "a.txt").exists()
    child = int(pid_file.read_text())
    assert wait_gone(child), "the hook's background child was killed with its process group"
