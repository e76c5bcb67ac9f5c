"""The calls of one Codex turn wait together: a person approves the rest of the turn at once,
and a rejection's feedback reaches the agent without skipping what it tries next."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.codex.test_codex_hook import Answer, fixture
from tests.server.helpers import wait_notification

STAND_IN = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"
TURN = json.loads((Path(__file__).parent / "fixtures" / "pre_bash_write.json").read_text())["turn_id"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})


def start_hook(daemon: DaemonProcess, ws: Path, use_id: str, command: str, turn: str = TURN,
               payload: str = "pre_bash_write") -> subprocess.Popen[str]:
    """`intentd hook codex PreToolUse` as Codex runs it, one process per call, left running.
    Its parent, the agent the hook names to the daemon, is a stand-in process: this test's own
    process answers as the person, and the daemon would refuse an agent's ancestor that."""
    process = subprocess.Popen(
        [sys.executable, "-c", STAND_IN, sys.executable, "-m", "intentd.daemon.cli", "hook",
         "codex", "PreToolUse", "--socket", str(daemon.socket_path), "--hook-timeout", "30"],
        cwd=ws, env=dict(os.environ),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None
    process.stdin.write(json.dumps(fixture(payload, ws, tool_use_id=use_id,
                                           turn_id=turn, command=command)))
    process.stdin.close()
    return process


def finished(process: subprocess.Popen[str]) -> Answer:
    assert process.stdout is not None and process.stderr is not None
    code = process.wait(30)
    return Answer(code, process.stdout.read(), process.stderr.read())


def test_the_rest_of_a_codex_turn_is_approved_at_once_and_a_rejection_skips_nothing(
        daemon: DaemonProcess, ws: Path) -> None:
    with Client(daemon.socket_path, timeout=30) as app:
        app.initialize("intentd-gui test")
        app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
        assert finished(start_hook(daemon, ws, "call_s", "intentd hook select INT-1",
                                   payload="pre_bash_read")).allowed
        calls = [start_hook(daemon, ws, f"call_{i}", f"touch src/t{i}") for i in range(2)]
        waiting = [wait_notification(app, protocol.APPROVALS_REQUESTED, 30) for _ in calls]
        assert [w["batch"] for w in waiting] == [TURN, TURN], "both of the same turn"
        other = start_hook(daemon, ws, "call_o", "touch src/other", turn="another-turn")
        other_id = wait_notification(app, protocol.APPROVALS_REQUESTED, 30)["id"]
        answered = app.call(protocol.APPROVALS_RESPOND, {
            "approval_id": waiting[0]["id"], "decision": "approve", "rest_of_turn": True})
        assert sorted(answered["answered"]) == sorted(w["id"] for w in waiting)
        assert all(finished(call).allowed for call in calls)
        assert [a["id"] for a in app.call(protocol.APPROVALS_LIST)["approvals"]] == [other_id]
        app.call(protocol.APPROVALS_RESPOND, {"approval_id": other_id, "decision": "reject",
                                              "feedback": "use make instead"})
        refused = finished(other)
        assert refused.denied is not None and "use make instead" in refused.denied
        again = start_hook(daemon, ws, "call_a", "make build", turn="another-turn")
        asked = wait_notification(app, protocol.APPROVALS_REQUESTED, 30)  # asked, not skipped
        assert asked["batch"] == "another-turn"
        app.call(protocol.APPROVALS_RESPOND, {"approval_id": asked["id"], "decision": "approve"})
        assert finished(again).allowed
