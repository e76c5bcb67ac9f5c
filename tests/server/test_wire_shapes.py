"""The daemon answers in the protocol's typed shapes: its values' own JSON agrees with them, and
a real daemon's answers read back into them and out again unchanged (no key more, none less)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.checkpoints.model import Checkpoint, Coverage, FileDiff
from intentd.daemon.client import Client
from intentd.daemon.engine.intents import Intent
from intentd.daemon.protocol import messages
from intentd.daemon.server import wire
from intentd.daemon.testing import make_intent, write_intents
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


def same_after_a_round_trip(shape: Any, answer: dict[str, Any]) -> None:
    assert shape.from_json(answer).to_json() == answer


def test_answers_are_the_declared_shapes(connect: Connect, workspace: Path) -> None:
    client = connect("test")
    client.call(protocol.EVENTS_SUBSCRIBE, {})
    session_id = open_session(client, workspace)
    root = str(workspace)
    calls = {protocol.SESSIONS_LIST: {}, protocol.WORKSPACES_LIST: {},
             protocol.INTENTS_LIST: {"workspace": root}, protocol.APPROVALS_LIST: {},
             protocol.CHECKPOINTS_LIST: {"workspace": root}}
    answers = {protocol.TOOLS_CALL: client.call(protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "write_to_file", "approval_timeout": 0.1,
        "args": {"path": "src/new.py", "content": "x = 1\n"}})}
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
