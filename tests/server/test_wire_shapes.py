"""The daemon answers in the protocol's typed shapes: its values' own JSON agrees with them, and
a real daemon's answers read back into them and out again unchanged (no key more, none less)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.checkpoints.model import Checkpoint, Coverage, FileDiff, RestoreResult
from intentd.daemon.client import Client
from intentd.daemon.engine.intents import Intent
from intentd.daemon.protocol import messages
from intentd.daemon.sandbox.status import SandboxStatus
from intentd.daemon.server import wire
from intentd.daemon.testing import make_intent, write_intents
from intentd.daemon.trace.blame import Author
from intentd.daemon.trace.chain import ChainReport, Place
from intentd.daemon.utils.yamlfile import ConfigError, ConfigErrors
from tests.server.helpers import open_session

Connect = Callable[[str], Client]


def test_values_json_agrees_with_the_typed_shapes() -> None:
    checkpoint = Checkpoint("cp-000001", 1.5, "before x", ("a.py",), (("big.bin", "too big"),),
                            "files", "full scan: no file watcher")
    assert wire.checkpoint(checkpoint).to_json() == checkpoint.to_json()
    many = Coverage(True, 10, tuple(f"d{i}" for i in range(25)), "the watch limit", 2)
    assert wire.coverage(many).to_json() == many.to_json()
    diff = FileDiff("a.py", "added", "+x\n")
    assert wire.file_diff(diff).to_json() == diff.to_json()
    for extra in ({}, {"owner": "me"}):
        intent = Intent("INT-1", "one", "IN_PROGRESS", ("src/**",), ("c",), ("a",), extra=extra)
        assert wire.intent(intent, True).to_json() == {**intent.to_json(), "selectable": True}
    error = ConfigErrors([ConfigError("f.yaml", 3, "bad"), ConfigError("f.yaml", 9, "worse")])
    assert wire.config_error(error).to_json() == error.to_json()  # type: ignore[union-attr]
    done = RestoreResult("cp-000001", "cp-000002", ("a.py",), ("new.py",), (("b.py", "why"),))
    assert wire.restored(done).to_json() == done.to_json()
    for status in (SandboxStatus(0, "unconfined: no Landlock"), SandboxStatus(6, "confined")):
        assert wire.sandbox(status).to_json() == status.to_json()
    broken = ChainReport(lines=9, chained=8, unchained=1, problem="line 4 changed", kind="changed",
                         at=Place("ledger.jsonl", 4), head_seq=8, notes=["a note"])
    for report in (ChainReport(), broken):
        assert wire.chain_report(report).to_json() == report.to_json()
    author = Author("c-1", "INT-1", "s-1", "claude-code", "write_to_file", "2026-01-02T03:04:05Z")
    assert wire.blame_author(author, "one").to_json() == {**author.to_json(), "intent_name": "one"}


def same_after_a_round_trip(shape: Any, answer: dict[str, Any]) -> None:
    assert shape.from_json(answer).to_json() == answer


def test_answers_are_the_declared_shapes(connect: Connect, workspace: Path) -> None:
    client = connect("test")
    answers = {protocol.INITIALIZE: client.initialize("test"),
               protocol.EVENTS_SUBSCRIBE: client.call(protocol.EVENTS_SUBSCRIBE, {})}
    session_id = open_session(client, workspace)
    root = str(workspace)
    calls = {protocol.SESSIONS_LIST: {}, protocol.WORKSPACES_LIST: {},
             protocol.INTENTS_LIST: {"workspace": root}, protocol.APPROVALS_LIST: {},
             protocol.CHECKPOINTS_LIST: {"workspace": root}, protocol.TOOLS_LIST: {},
             protocol.LEDGER_VERIFY: {"workspace": root}}
    answers[protocol.TOOLS_CALL] = client.call(protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "write_to_file", "approval_timeout": 0.1,
        "args": {"path": "src/new.py", "content": "x = 1\n"}})
    assert answers[protocol.TOOLS_CALL]["result"]["ok"] is False  # nobody approved it in time
    answers[protocol.TOOLS_AUTHORIZE] = client.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session_id, "tool": "read_file", "args": {"path": "src/app.py"}})
    answers[protocol.INTENTS_SELECT] = client.call(protocol.INTENTS_SELECT, {
        "session_id": session_id, "intent_id": "INT-1"})
    answers.update({method: client.call(method, params) for method, params in calls.items()})
    assert answers[protocol.SESSIONS_LIST]["sessions"][0]["intent_id"] == "INT-1"
    assert answers[protocol.INTENTS_LIST]["intents"][0]["selectable"] is True
    for method, answer in answers.items():
        same_after_a_round_trip(messages.RESULTS[method], answer)
    write_intents(workspace, make_intent(), make_intent("INT-2", status="BLOCKED", owner="me"))
    seen: set[str] = set()
    while (note := client.next_notification(timeout=5)) is not None:
        shape = messages.NOTIFICATION_PARAMS.get(note["method"])
        if shape is not None:
            same_after_a_round_trip(shape, note["params"])
            seen.add(note["method"])
        if protocol.INTENTS_CHANGED in seen:
            break
    assert {protocol.SESSIONS_OPENED, protocol.APPROVALS_REQUESTED, protocol.APPROVALS_RESOLVED,
            protocol.TOOLS_FINISHED, protocol.INTENTS_CHANGED} <= seen
    closed = client.call(protocol.SESSIONS_CLOSE, {"session_id": session_id})
    same_after_a_round_trip(messages.RESULTS[protocol.SESSIONS_CLOSE], closed)
