"""Telemetry: each decided call a span, each approval a span event, sent to a real OTLP receiver."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the intentd[otel] extra is not installed")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
pytest.importorskip("opentelemetry.proto")

from intentd.daemon import protocol  # noqa: E402
from intentd.daemon.client import Client  # noqa: E402
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace  # noqa: E402
from tests.server.helpers import Background, wait_notification  # noqa: E402
from tests.trace.otlp_receiver import OtlpReceiver, attributes  # noqa: E402


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


def test_calls_become_spans_and_approvals_events(short_dir: Path, tmp_path: Path,
                                                 receiver: OtlpReceiver) -> None:
    workspace = make_workspace(tmp_path / "ws", make_intent("INT-1"),
                               files={"src/app.py": "print('hi')\n"})
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    with DaemonProcess(short_dir / "d.sock", short_dir / "state", extra_env=env) as daemon, \
            Client(daemon.socket_path, timeout=20) as agent, \
            Client(daemon.socket_path, timeout=20) as person:
        agent.initialize("agent")
        person.initialize("gui")
        person.call(protocol.EVENTS_SUBSCRIBE, {})
        session = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace),
                                                      "agent": "claude-code"})["session_id"]
        agent.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
        agent.call(protocol.TOOLS_CALL, {"session_id": session, "tool": "read_file",
                                         "args": {"path": "src/app.py"}})
        call = Background(agent, protocol.TOOLS_CALL, {
            "session_id": session, "tool": "write_to_file",
            "args": {"path": "src/app.py", "content": "x = 1\n"}})
        request = wait_notification(person, protocol.APPROVALS_REQUESTED)
        time.sleep(0.3)  # the person takes a moment: the span says how long
        person.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "approve"})
        assert call.result()["decision"] == "allow"
        refused = agent.call(protocol.TOOLS_CALL, {"session_id": session, "tool": "write_to_file",
                                                   "args": {"path": "../outside.txt", "content": "x"}})
        assert refused["decision"] == "deny"
        spans = receiver.wait_for(3)
    assert set(receiver.paths) == {"/v1/traces"}
    resource, _ = spans[0]
    assert resource["service.name"] == "intentd"
    by_tool = {}
    for _, span in spans:
        found = attributes(span)
        by_tool.setdefault(found["intentd.tool"], []).append((span, found))
    (read_span, read), = by_tool["read_file"]
    assert read["intentd.decision"] == "allow" and not read_span.events
    (approved_span, approved), (denied_span, denied) = by_tool["write_to_file"]
    assert approved["intentd.intent_id"] == "INT-1" and approved["intentd.agent"] == "claude-code"
    assert approved["intentd.session"] == session
    assert approved["intentd.workspace"] == str(workspace.resolve())
    assert approved["intentd.stage"] == "approval" and approved["intentd.result"] == "success"
    assert approved["intentd.waiting_for_person_ms"] >= 250
    assert approved["intentd.execution_ms"] >= 0
    (event,) = approved_span.events
    assert event.name == "approval"
    assert approved_span.start_time_unix_nano <= event.time_unix_nano <= approved_span.end_time_unix_nano
    assert {a.key: a.value.string_value for a in event.attributes}["intentd.approved_by"] == "person"
    assert denied["intentd.decision"] == "deny" and denied["intentd.result"] == "not_run"
    assert denied_span.status.code == 2  # STATUS_CODE_ERROR


def test_no_endpoint_no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    from intentd.daemon.trace.otel import spans_from_environment

    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    assert spans_from_environment() is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert spans_from_environment() is None
