"""Text that cannot be encoded (lone surrogates) from a hostile client: refused, and never blocks others."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.robustness.helpers import RawClient, wait_until

Connect = Callable[[str], Client]


def test_lone_surrogates_in_arguments_are_refused_at_validate_and_recorded(
        connect: Connect, daemon: DaemonProcess, workspace: Path) -> None:
    person = connect("gui")
    agent = RawClient(daemon.socket_path)
    session_id = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace)})["result"]["session_id"]
    agent.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    for args in ({"path": "src/\udcff.txt", "content": "x"},
                 {"path": "src/ok.txt", "content": "x\ud800"},
                 {"path": "src/ok.txt", "content": "x", "\udfffkey": 1}):
        answer = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "write_to_file",
                                                  "args": args, "approval_timeout": 2})
        assert "result" in answer, answer
        assert (answer["result"]["decision"], answer["result"]["stage"]) == ("deny", "validate")
        assert "not valid Unicode" in answer["result"]["reason"]
    assert sorted(p.name for p in (workspace / "src").iterdir()) == ["app.py"], "nothing written"
    entries = person.call(protocol.LEDGER_QUERY, {"workspace": str(workspace)})["entries"]
    refused = [e for e in entries if e.get("stage") == "validate"]
    assert len(refused) == 3, "every refusal is in the ledger"
    agent.close()


def test_a_bad_approval_never_blocks_the_listing_and_its_timeout_holds(
        connect: Connect, daemon: DaemonProcess, workspace: Path) -> None:
    watcher, lister = connect("gui"), connect("cli")
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED]})
    agent = RawClient(daemon.socket_path)
    session_id = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace)})["result"]["session_id"]
    agent.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    started = time.monotonic()
    request_id = agent.send(protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "write_to_file", "batch": "turn-\udcff",
        "args": {"path": "src/new.py", "content": "x = 1\n"}, "approval_timeout": 1.5})
    wait_until(lambda: bool(lister.call(protocol.APPROVALS_LIST, {}, timeout=5)["approvals"]),
               what="the approval in the listing")
    listed = lister.call(protocol.APPROVALS_LIST, {}, timeout=5)["approvals"]
    assert listed[0]["tool"] == "write_to_file" and listed[0]["batch"].startswith("turn-")
    answer = agent.answer(request_id)
    assert answer["result"]["decision"] == "deny" and "no person answered" in answer["result"]["reason"]
    assert time.monotonic() - started < 10
    assert lister.call(protocol.APPROVALS_LIST, {}, timeout=5)["approvals"] == []
    agent.close()


def test_an_approval_with_bad_text_can_still_be_answered(connect: Connect, daemon: DaemonProcess,
                                                         workspace: Path) -> None:
    person = connect("gui")
    agent = RawClient(daemon.socket_path)
    session_id = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace)})["result"]["session_id"]
    agent.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    request_id = agent.send(protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "write_to_file", "batch": "\ud800",
        "args": {"path": "src/new.py", "content": "x = 1\n"}})
    wait_until(lambda: bool(person.call(protocol.APPROVALS_LIST, {}, timeout=5)["approvals"]),
               what="the approval in the listing")
    approval = person.call(protocol.APPROVALS_LIST, {}, timeout=5)["approvals"][0]
    person.call(protocol.APPROVALS_RESPOND, {"approval_id": approval["id"], "decision": "approve"})
    assert agent.answer(request_id)["result"]["result"]["ok"]
    assert (workspace / "src" / "new.py").read_text() == "x = 1\n"
    agent.close()



def test_a_session_named_with_bad_text_is_still_recorded(connect: Connect, daemon: DaemonProcess,
                                                         workspace: Path) -> None:
    person = connect("gui")
    agent = RawClient(daemon.socket_path)
    opened = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace), "agent": "bot-\udcff"})
    session_id = opened["result"]["session_id"]
    answer = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "read_file",
                                              "args": {"path": "src/app.py"}})
    assert "result" in answer, answer
    entries = person.call(protocol.LEDGER_QUERY, {"workspace": str(workspace)})["entries"]
    assert [e["intent"]["agent"] for e in entries] == ["bot-\udcff"]
    agent.close()
