"""Approvers, the hand-off to an agent's own prompt, grants and batch answers, on a real daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError
from intentd.daemon.engine.engine import HANDED_OFF
from intentd.daemon.testing import DaemonProcess
from tests.server.helpers import Background, open_session, wait_notification

Connect = Callable[[str], Client]
WRITE = {"tool": "write_to_file", "args": {"path": "src/new.py", "content": "x = 1\n"}}


def approver(connect: Connect, name: str = "intentd-gui test") -> Client:
    client = connect(name)
    client.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    return client


def ledger_lines(daemon: DaemonProcess) -> list[dict[str, Any]]:
    files = list(daemon.state_dir.rglob("ledger.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()
            if '"phase"' not in line]


def receipt_of(daemon: DaemonProcess, call_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = [e for e in ledger_lines(daemon) if e["intent"]["id"] == call_id]
        if found:
            return found[-1]
        time.sleep(0.02)
    raise AssertionError(f"no receipt for {call_id}")


def test_with_no_approver_the_agents_own_prompt_asks_at_once(
        connect: Connect, workspace: Path, daemon: DaemonProcess) -> None:
    agent = connect("hook")
    session_id = open_session(agent, workspace)
    started = time.monotonic()
    answer = agent.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id, **WRITE,
                                                   "native_prompt": True})
    assert time.monotonic() - started < 2, "handed off, not left waiting for nobody"
    assert answer["decision"] == "ask" and "agent's own prompt" in answer["reason"]
    assert answer["checkpoint_id"], "ready to run should the person say yes there"
    agent.call(protocol.TOOLS_REPORT, {"session_id": session_id, "call_id": answer["call_id"],
                                       "ok": True, "output": "written"})
    entry = receipt_of(daemon, answer["call_id"])
    assert entry["decision"] == "allow" and entry["approved_by"] == HANDED_OFF


def test_a_call_declined_in_the_agents_prompt_is_recorded_as_not_run(
        connect: Connect, workspace: Path, daemon: DaemonProcess) -> None:
    agent = connect("hook")
    session_id = open_session(agent, workspace)
    answer = agent.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id, **WRITE,
                                                   "native_prompt": True})
    agent.call(protocol.SESSIONS_CLOSE, {"session_id": session_id})  # no report ever came
    entry = receipt_of(daemon, answer["call_id"])
    assert entry["decision"] == "deny" and "declined there" in entry["reason"]
    assert entry["approved_by"] is None


def test_with_an_approver_the_call_waits_and_goes_to_the_prompt_when_it_leaves(
        connect: Connect, workspace: Path) -> None:
    app = approver(connect)
    agent = connect("hook")
    session_id = open_session(agent, workspace)
    assert agent.call(protocol.APPROVALS_LIST)["approvers"] == 1
    call = Background(agent, protocol.TOOLS_AUTHORIZE, {"session_id": session_id, **WRITE,
                                                        "native_prompt": True})
    request = wait_notification(app, protocol.APPROVALS_REQUESTED)
    assert request["native_prompt"] is True
    app.close()
    answer = call.result()
    assert answer["decision"] == "ask"
    assert agent.call(protocol.APPROVALS_LIST)["approvers"] == 0


def test_without_a_native_prompt_the_call_still_waits_for_a_person(
        connect: Connect, workspace: Path) -> None:
    watcher = connect("watcher")
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED]})
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    call = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id, **WRITE,
                                                   "approval_timeout": 0.5})
    assert wait_notification(watcher, protocol.APPROVALS_REQUESTED)["native_prompt"] is False
    assert call.result()["decision"] == "deny"


def test_an_agent_side_process_cannot_pose_as_an_approver(daemon: DaemonProcess) -> None:
    script = ("import json,sys\nfrom intentd.daemon import protocol\n"
              "from intentd.daemon.client import Client\n"
              "c = Client(sys.argv[1]).connect(); c.initialize('intentd-gui posing')\n"
              "print(json.dumps(c.call(protocol.EVENTS_SUBSCRIBE, {'approver': True})))\n")
    env = {**os.environ, "CLAUDECODE": "1"}  # an agent's environment: its side
    out = subprocess.run([sys.executable, "-c", script, str(daemon.socket_path)], env=env,
                         capture_output=True, text=True, timeout=30, check=True).stdout
    assert json.loads(out)["approver"] is False


def test_a_subscriber_that_does_not_say_it_answers_is_no_approver(connect: Connect) -> None:
    watcher = connect("dashboard")
    answer = watcher.call(protocol.EVENTS_SUBSCRIBE, {})
    assert answer["approver"] is False and answer["approvers"] == 0


# -- grants ---------------------------------------------------------------------------------

def pending_command(agent: Client, watcher: Client, session_id: str, command: str,
                    batch: str | None = None) -> tuple[Background, dict[str, Any]]:
    params: dict[str, Any] = {"session_id": session_id, "tool": "execute_command",
                              "args": {"command": command}}
    if batch:
        params["batch"] = batch
    call = Background(agent, protocol.TOOLS_CALL, params)
    return call, wait_notification(watcher, protocol.APPROVALS_REQUESTED)


def test_a_grant_from_the_app_answers_the_next_calls_until_revoked(
        connect: Connect, workspace: Path, daemon: DaemonProcess) -> None:
    app = approver(connect)
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    call, request = pending_command(agent, app, session_id, "touch src/made")
    answer = app.call(protocol.APPROVALS_RESPOND, {
        "approval_id": request["id"], "decision": "approve",
        "grant": {"lifetime": "workspace", "shape": "command"}})
    grant = answer["grant"]["added"]
    assert grant["prefixes"] == [["touch"]] and grant["origin"]["approval_id"] == request["id"]
    assert call.result()["decision"] == "allow"
    again = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "execute_command",
                                             "args": {"command": "touch src/again"}})
    assert again["decision"] == "allow" and again["approved_by"] == f"grant {grant['id']}"
    listed = agent.call(protocol.GRANTS_LIST, {"workspace": str(workspace)})["grants"]
    assert [g["id"] for g in listed] == [grant["id"]]
    app.call(protocol.GRANTS_REVOKE, {"grant_id": grant["id"]})
    call, request = pending_command(agent, app, session_id, "touch src/third")
    assert request["tool"] == "execute_command", "asked again at once after the revoke"
    app.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "reject"})
    call.result()


def test_a_grant_from_another_client_waits_for_the_app(connect: Connect, workspace: Path) -> None:
    app, cli = approver(connect), connect("intentd-cli")
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    call, request = pending_command(agent, app, session_id, "touch src/made")
    answer = cli.call(protocol.APPROVALS_RESPOND, {
        "approval_id": request["id"], "decision": "approve",
        "grant": {"lifetime": "session", "shape": "command"}})
    queued = answer["grant"]["queued"]
    assert call.result()["decision"] == "allow", "the call itself is approved at once"
    assert agent.call(protocol.GRANTS_LIST, {})["grants"] == []
    with pytest.raises(RpcError) as refused:
        cli.call(protocol.GRANTS_CONFIRM, {"request_id": queued["id"], "decision": "approve"})
    assert refused.value.code == protocol.PERSON_ONLY
    app.call(protocol.GRANTS_CONFIRM, {"request_id": queued["id"], "decision": "approve"})
    again = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "execute_command",
                                             "args": {"command": "touch src/again"}})
    assert again["approved_by"].startswith("grant ")


def test_a_grant_that_would_widen_a_gate_is_refused_and_the_call_still_waits(
        connect: Connect, workspace: Path) -> None:
    app = approver(connect)
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    call, request = pending_command(agent, app, session_id, "cat ../outside.txt > src/x")
    with pytest.raises(RpcError) as refused:
        app.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "approve",
                                              "grant": {"lifetime": "workspace",
                                                        "shape": "command"}})
    assert "cannot remember" in refused.value.message
    app.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "reject"})
    assert call.result()["decision"] == "deny"


def test_approve_the_rest_of_the_turn_and_a_chosen_few(connect: Connect, workspace: Path) -> None:
    app = approver(connect)
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    # one connection per call waiting at once: a test client answers one call at a time
    turn = [pending_command(connect("agent"), app, session_id, f"touch src/t{i}", batch="turn-1")
            for i in range(3)]
    other = pending_command(connect("agent"), app, session_id, "touch src/other", batch="turn-2")
    answer = app.call(protocol.APPROVALS_RESPOND, {"approval_id": turn[0][1]["id"],
                                                   "decision": "approve", "rest_of_turn": True})
    assert sorted(answer["answered"]) == sorted(r["id"] for _, r in turn)
    assert all(c.result()["decision"] == "allow" for c, _ in turn)
    assert len(app.call(protocol.APPROVALS_LIST)["approvals"]) == 1
    more = [pending_command(connect("agent"), app, session_id, f"touch src/m{i}")
            for i in range(2)]
    ids = [r["id"] for _, r in more] + [other[1]["id"]]
    answer = app.call(protocol.APPROVALS_RESPOND, {"approval_ids": ids, "decision": "reject",
                                                   "feedback": "not now"})
    assert sorted(answer["answered"]) == sorted(ids)
    for call, _ in [*more, other]:
        assert "not now" in call.result()["reason"]


def test_an_agent_side_process_can_neither_revoke_nor_confirm_grants(
        connect: Connect, workspace: Path, daemon: DaemonProcess) -> None:
    app = approver(connect)
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    call, request = pending_command(agent, app, session_id, "touch src/made")
    grant = app.call(protocol.APPROVALS_RESPOND, {
        "approval_id": request["id"], "decision": "approve",
        "grant": {"lifetime": "workspace", "shape": "command"}})["grant"]["added"]
    call.result()
    script = ("import json,sys\nfrom intentd.daemon import protocol\n"
              "from intentd.daemon.client import Client, RpcError\n"
              "c = Client(sys.argv[1]).connect(); c.initialize('intentd-gui posing')\n"
              "out = []\n"
              "for m, p in ((protocol.GRANTS_REVOKE, {'grant_id': sys.argv[2]}),\n"
              "             (protocol.GRANTS_CONFIRM, {'request_id': 'gr-1', 'decision': 'approve'})):\n"
              "    try:\n        c.call(m, p); out.append(None)\n"
              "    except RpcError as e:\n        out.append(e.code)\n"
              "print(json.dumps(out))\n")
    env = {**os.environ, "CLAUDECODE": "1"}
    out = subprocess.run([sys.executable, "-c", script, str(daemon.socket_path), grant["id"]],
                         env=env, capture_output=True, text=True, timeout=30, check=True).stdout
    assert json.loads(out) == [protocol.PERSON_ONLY, protocol.PERSON_ONLY]
    assert [g["id"] for g in agent.call(protocol.GRANTS_LIST, {})["grants"]] == [grant["id"]]


def test_a_session_grant_confirmed_after_its_session_ended_is_refused(
        connect: Connect, workspace: Path) -> None:
    app, cli = approver(connect), connect("intentd-cli")
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    call, request = pending_command(agent, app, session_id, "touch src/made")
    queued = cli.call(protocol.APPROVALS_RESPOND, {
        "approval_id": request["id"], "decision": "approve",
        "grant": {"lifetime": "session", "shape": "command"}})["grant"]["queued"]
    call.result()
    agent.call(protocol.SESSIONS_CLOSE, {"session_id": session_id})
    with pytest.raises(RpcError) as refused:
        app.call(protocol.GRANTS_CONFIRM, {"request_id": queued["id"], "decision": "approve"})
    assert "session that has ended" in refused.value.message
    assert app.call(protocol.GRANTS_LIST, {})["grants"] == []
