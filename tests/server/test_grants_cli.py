"""`intentd approve` with a grant or for a whole turn, `intentd grants`, `intentd status`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.server.helpers import Background, open_session, wait_notification

Connect = Callable[[str], Client]


def intentd(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "intentd.daemon.cli", *args, "--socket",
                           str(daemon.socket_path)], capture_output=True, text=True, timeout=60)


def test_status_says_whether_an_approver_is_connected(connect: Connect,
                                                      daemon: DaemonProcess) -> None:
    assert "approvers connected: 0 (calls needing a person go to the agent's own prompt" in \
        intentd(daemon, "status").stdout
    app = connect("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    assert "approvers connected: 1\n" in intentd(daemon, "status").stdout


def test_the_approvals_listing_says_whether_an_approver_is_connected(
        connect: Connect, daemon: DaemonProcess) -> None:
    assert intentd(daemon, "approvals").stdout.startswith(
        "approvers connected: 0 (calls needing a person go to the agent's own prompt")
    app = connect("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    assert intentd(daemon, "approvals").stdout.startswith("approvers connected: 1\n")


def test_several_calls_are_answered_at_once_from_the_terminal(
        connect: Connect, workspace: Path, daemon: DaemonProcess) -> None:
    app = connect("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    session_id = open_session(connect("agent"), workspace)
    calls, ids = [], []
    for i in range(3):  # no batch: only the ids named are answered
        calls.append(Background(connect("agent"), protocol.TOOLS_CALL, {
            "session_id": session_id, "tool": "execute_command",
            "args": {"command": f"touch src/f{i}"}}))
        ids.append(wait_notification(app, protocol.APPROVALS_REQUESTED)["id"])
    done = intentd(daemon, "approve", ids[0], ids[2])
    assert done.returncode == 0 and done.stdout == f"approved {ids[0]} {ids[2]}\n"
    assert [calls[0].result()["decision"], calls[2].result()["decision"]] == ["allow"] * 2
    assert [a["id"] for a in app.call(protocol.APPROVALS_LIST)["approvals"]] == [ids[1]]
    refused = intentd(daemon, "reject", ids[1], ids[0], "--feedback", "not this one")
    assert refused.returncode == 0 and refused.stdout == f"rejected {ids[1]}\n", \
        "one already answered: the other is still answered"
    assert "not this one" in calls[1].result()["reason"]


def test_a_grant_from_the_terminal_waits_for_the_app_then_lists_and_revokes(
        connect: Connect, workspace: Path, daemon: DaemonProcess) -> None:
    app = connect("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    call = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id,
                                                   "tool": "execute_command",
                                                   "args": {"command": "touch src/one"}})
    request = wait_notification(app, protocol.APPROVALS_REQUESTED)
    done = intentd(daemon, "approve", request["id"], "--grant", "workspace")
    assert done.returncode == 0 and "waits for your confirmation in the desktop app" in done.stdout
    assert call.result()["decision"] == "allow"
    assert "waiting for confirmation in the app: `touch`" in intentd(daemon, "grants").stdout
    queued = wait_notification(app, protocol.GRANTS_REQUESTED)
    app.call(protocol.GRANTS_CONFIRM, {"request_id": queued["id"], "decision": "approve"})
    listing = intentd(daemon, "grants").stdout
    grant_id = listing.split()[0]
    assert grant_id.startswith("g-") and f"from approving execute_command ({request['id']})" in listing
    rule = intentd(daemon, "grants", "--policy-rule", grant_id).stdout
    assert "commands:\n  allow:\n    - 'touch'\n    - 'touch *'\n" in rule
    assert intentd(daemon, "grants", "--revoke", grant_id).returncode == 0
    assert "no grants" in intentd(daemon, "grants").stdout


def test_a_path_grant_from_the_terminal_takes_its_pattern(
        connect: Connect, workspace: Path, daemon: DaemonProcess) -> None:
    app = connect("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    session_id = open_session(connect("agent"), workspace)
    call = Background(connect("agent"), protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "write_to_file",
        "args": {"path": "src/deep/a.py", "content": "a\n"}})
    request = wait_notification(app, protocol.APPROVALS_REQUESTED)
    narrow = intentd(daemon, "approve", request["id"], "--grant", "session", "--shape", "path",
                     "--pattern", "docs/**")
    assert narrow.returncode == 1 and "does not cover every path of the call" in narrow.stderr
    done = intentd(daemon, "approve", request["id"], "--grant", "session", "--shape", "path",
                   "--pattern", "src/**")
    assert done.returncode == 0 and "write_to_file on src/**, this session" in done.stdout
    assert call.result()["decision"] == "allow"


def test_approve_the_rest_of_a_turn_from_the_terminal(connect: Connect, workspace: Path,
                                                      daemon: DaemonProcess) -> None:
    app = connect("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    session_id = open_session(connect("agent"), workspace)
    calls, ids = [], []
    for i in range(3):
        calls.append(Background(connect("agent"), protocol.TOOLS_CALL, {
            "session_id": session_id, "tool": "execute_command", "batch": "turn-7",
            "args": {"command": f"touch src/f{i}"}}))
        ids.append(wait_notification(app, protocol.APPROVALS_REQUESTED)["id"])
    done = intentd(daemon, "approve", ids[0], "--rest-of-turn")
    assert done.returncode == 0 and done.stdout.count("a-") == 3
    assert all(c.result()["decision"] == "allow" for c in calls)


def test_approvals_watch_is_an_approver_while_it_runs(daemon: DaemonProcess) -> None:
    watcher = subprocess.Popen([sys.executable, "-m", "intentd.daemon.cli", "approvals", "--watch",
                                "--socket", str(daemon.socket_path)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline().startswith("watching as an approver (1 connected)")
        assert "approvers connected: 1\n" in intentd(daemon, "status").stdout
    finally:
        watcher.terminate()
        watcher.wait(10)
