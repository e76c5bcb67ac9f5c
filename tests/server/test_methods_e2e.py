"""The daemon's other methods end to end: authorize/report, settings, ledger, checkpoints, the CLI."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError
from intentd.daemon.testing import DaemonProcess
from tests.server.helpers import Background, open_session, wait_notification

Connect = Callable[[str], Client]
APP = "intentd-gui test"  # the desktop app's client name: the person widens settings there


def test_authorize_then_report_leaves_one_receipt(connect: Connect, workspace: Path) -> None:
    hook = connect("hook")
    session_id = open_session(hook, workspace, select=False)
    denied = hook.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id, "tool": "write_to_file",
                                                  "args": {"path": "src/x.py", "content": "1"}})
    assert (denied["decision"], denied["stage"]) == ("deny", "intent_gate")
    hook.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id, "tool": "select_active_intent",
                                         "args": {"intent_id": "INT-1"}})
    connect(APP).call(protocol.SETTINGS_UPDATE, {"workspace": str(workspace),
                                                  "auto_approve": {"edit": True}})
    allowed = hook.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id, "tool": "write_to_file",
                                                   "args": {"path": "src/x.py", "content": "1"}})
    assert allowed["decision"] == "allow" and allowed["checkpoint_id"]
    assert not (workspace / "src" / "x.py").exists(), "authorize never runs the tool"
    (workspace / "src" / "x.py").write_text("1")  # the client runs it
    assert hook.call(protocol.TOOLS_REPORT, {"session_id": session_id, "call_id": allowed["call_id"],
                                             "ok": True, "output": "wrote it"}) == {"recorded": True}
    with pytest.raises(RpcError) as caught:
        hook.call(protocol.TOOLS_REPORT, {"session_id": session_id, "call_id": allowed["call_id"],
                                          "ok": True})
    assert caught.value.code == protocol.INVALID_PARAMS
    entries = hook.call(protocol.LEDGER_QUERY, {"workspace": str(workspace),
                                                "tool": "write_to_file"})["entries"]
    assert [e["decision"] for e in entries] == ["deny", "allow"]
    assert entries[-1]["receipt"]["result"] == "success"
    assert list(entries[-1]["receipt"]["files_after"].values())[0] is not None
    # the session knows what it wrote: an edit of it is not stale
    edit = hook.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id, "tool": "replace_in_file",
                                                "args": {"path": "src/x.py", "old_str": "1",
                                                         "new_str": "2"}})
    assert edit["decision"] == "allow"


def test_settings_persist_across_daemon_restarts(short_dir: Path, workspace: Path) -> None:
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as daemon, \
            Client(daemon.socket_path) as client:
        client.initialize(APP)  # the person, in the app
        before = client.call(protocol.SETTINGS_GET, {"workspace": str(workspace)})
        assert before["policy"]["auto_approve"]["edit"] is False
        after = client.call(protocol.SETTINGS_UPDATE, {"workspace": str(workspace),
                                                       "auto_approve": {"edit": True}})
        assert after["policy"]["auto_approve"]["edit"] is True
        assert after["overrides"] == {"auto_approve": {"edit": True}}
        for bad in ({"edit": "yes"}, {"nonsense": True}, {"max_consecutive": -1}):
            with pytest.raises(RpcError) as caught:
                client.call(protocol.SETTINGS_UPDATE, {"workspace": str(workspace),
                                                       "auto_approve": bad})
            assert caught.value.code == protocol.INVALID_PARAMS
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as daemon, \
            Client(daemon.socket_path) as client:
        again = client.call(protocol.SETTINGS_GET, {"workspace": str(workspace)})
        assert again["policy"]["auto_approve"]["edit"] is True


def test_checkpoints_list_diff_and_restore_over_the_socket(connect: Connect, workspace: Path) -> None:
    agent = connect("agent")
    connect(APP).call(protocol.SETTINGS_UPDATE, {"workspace": str(workspace),
                                                 "auto_approve": {"edit": True}})
    session_id = open_session(agent, workspace)
    agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "read_file",
                                     "args": {"path": "src/app.py"}})
    done = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "write_to_file",
                                            "args": {"path": "src/app.py", "content": "broken\n"}})
    assert done["decision"] == "allow" and done["result"]["ok"]
    listed = agent.call(protocol.CHECKPOINTS_LIST, {"workspace": str(workspace)})["checkpoints"]
    assert done["checkpoint_id"] in [c["id"] for c in listed]
    diffs = agent.call(protocol.CHECKPOINTS_DIFF, {"workspace": str(workspace),
                                                   "checkpoint_id": done["checkpoint_id"]})["diffs"]
    assert diffs[0]["path"] == "src/app.py" and "+broken" in diffs[0]["unified"]
    restored = agent.call(protocol.CHECKPOINTS_RESTORE, {"workspace": str(workspace),
                                                          "checkpoint_id": done["checkpoint_id"]})
    assert restored["restored"] == ["src/app.py"] and restored["safety_checkpoint_id"]
    assert (workspace / "src" / "app.py").read_text() == "print('hi')\n"
    with pytest.raises(RpcError) as caught:
        agent.call(protocol.CHECKPOINTS_DIFF, {"workspace": str(workspace), "checkpoint_id": "cp-nope"})
    assert caught.value.code == protocol.CHECKPOINT_ERROR
    with pytest.raises(RpcError) as caught:
        agent.call(protocol.CHECKPOINTS_RESTORE, {"checkpoint_id": done["checkpoint_id"]})
    assert caught.value.code == protocol.INVALID_PARAMS, "a restore must name its workspace"


def cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "intentd.daemon.cli", *args, "--socket",
                           str(daemon.socket_path)], capture_output=True, text=True, timeout=30)


def test_the_terminal_answers_approvals(daemon: DaemonProcess, connect: Connect,
                                        workspace: Path) -> None:
    agent, watcher = connect("agent"), connect("watcher")
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED]})
    session_id = open_session(agent, workspace)
    first = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id, "tool": "write_to_file",
                                                    "args": {"path": "src/a.py", "content": "a"}})
    approval_id = wait_notification(watcher, protocol.APPROVALS_REQUESTED)["id"]
    listing = cli(daemon, "approvals")
    assert approval_id in listing.stdout and "+a" in listing.stdout
    status = cli(daemon, "status")
    assert str(workspace.resolve()) in status.stdout and "1 pending" in status.stdout
    assert cli(daemon, "approve", approval_id).returncode == 0
    assert first.result()["decision"] == "allow"
    second = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id, "tool": "write_to_file",
                                                     "args": {"path": "src/b.py", "content": "b"}})
    approval_id = wait_notification(watcher, protocol.APPROVALS_REQUESTED)["id"]
    assert cli(daemon, "reject", approval_id, "--feedback", "not b").returncode == 0
    assert second.result()["feedback"] == "not b"
    again = cli(daemon, "approve", approval_id)
    assert again.returncode == 1 and "already answered" in again.stderr


def test_the_terminal_says_when_no_daemon_runs(short_dir: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "approvals", "--socket",
                          str(short_dir / "none.sock")], capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "no intentd daemon" in out.stderr and "Traceback" not in out.stderr


def test_plan_mode_sessions_and_session_events(connect: Connect, workspace: Path) -> None:
    watcher, agent = connect("watcher"), connect("agent")
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.SESSIONS_OPENED,
                                                        protocol.SESSIONS_CLOSED]})
    opened = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace), "mode": "plan"})
    assert wait_notification(watcher, protocol.SESSIONS_OPENED)["mode"] == "plan"
    refused = agent.call(protocol.TOOLS_CALL, {"session_id": opened["session_id"],
                                               "tool": "write_to_file",
                                               "args": {"path": "src/a.py", "content": ""}})
    assert refused["stage"] == "mode"
    agent.call(protocol.SESSIONS_CLOSE, {"session_id": opened["session_id"]})
    assert wait_notification(watcher, protocol.SESSIONS_CLOSED)["session_id"] == opened["session_id"]
    started = time.monotonic()
    with pytest.raises(RpcError):
        agent.call(protocol.TOOLS_CALL, {"session_id": opened["session_id"], "tool": "read_file",
                                         "args": {"path": "README.md"}})
    assert time.monotonic() - started < 5


def test_a_workspace_with_nothing_recorded_has_an_empty_ledger(connect: Connect,
                                                               tmp_path: Path) -> None:
    """Asking before anything was recorded (the app does, when it first opens a workspace)
    is an empty answer, not an internal error."""
    fresh = tmp_path / "fresh"
    (fresh / ".orchestration").mkdir(parents=True)
    client = connect("cli")
    answer = client.call(protocol.LEDGER_QUERY, {"workspace": str(fresh)})
    assert answer["entries"] == [] and answer["older"] is None
    verified = client.call(protocol.LEDGER_VERIFY, {"workspace": str(fresh)})
    assert verified["ok"], verified
