"""OpenTelemetry: each decided call a span, exported over OTLP when the environment names where.

Off unless an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or ..._TRACES_ENDPOINT) and the
`intentd[otel]` extra is installed. The exporter reads the other standard variables itself
(headers, timeout, certificates, protocol). Nothing is done on a call's path but a queue put:
a thread of ours makes the spans, and the SDK's batch processor sends them.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from datetime import datetime
from typing import Any

from intentd.daemon import __version__

log = logging.getLogger(__name__)
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
AUTOMATIC = ("auto", None)  # approved_by of calls no person answered
MAX_QUEUED = 10_000  # calls waiting to become spans; past this they are counted, not kept


class CallSpans:
    """Turns ledger entries (ToolIntent + ToolReceipt) into spans on one tracer provider. A call
    only hands its entry to a queue (with the time it ended); a thread of ours makes the span,
    with the times the call really had, and the SDK's batch processor sends it."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("intentd", __version__)
        self.dropped = 0
        self._queue: queue.Queue[tuple[dict[str, Any], float] | None] = queue.Queue(MAX_QUEUED)
        self._thread = threading.Thread(target=self._make_spans, name="intentd-otel",
                                        daemon=True)
        self._thread.start()

    def call_decided(self, entry: dict[str, Any]) -> None:
        try:
            self._queue.put_nowait((entry, _now()))
        except queue.Full:  # a collector that cannot keep up costs spans, never a call's time
            self.dropped += 1

    def _make_spans(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._span(*item)
            except Exception:
                log.exception("could not make the span of a call")

    def _span(self, entry: dict[str, Any], now: float) -> None:
        intent, receipt = entry["intent"], entry["receipt"]
        timing = receipt.get("timing") or {}
        started = _epoch(timing.get("started_at") or intent.get("time"), now)
        decided_ms = float(timing.get("decided_ms") or 0.0)
        execution_ms = float(timing.get("execution_ms") or 0.0)
        total_ms = max(0.0, (now - started) * 1000)
        waiting_ms = max(0.0, total_ms - decided_ms - execution_ms)
        span = self.tracer.start_span(f"intentd {intent.get('tool')}",
                                      start_time=int(started * 1e9),
                                      attributes=_attributes(entry, waiting_ms))
        answered_by = entry.get("approved_by")
        # a person's (or a grant's) answer: approved, or rejected / timed out at the approval stage
        if answered_by not in AUTOMATIC or (entry.get("stage") == "approval"
                                            and entry.get("decision") == "deny"):
            span.add_event("approval", timestamp=int((started + (decided_ms + waiting_ms) / 1000)
                                                     * 1e9),
                           attributes={"intentd.approved_by": str(answered_by or ""),
                                       "intentd.decision": str(entry.get("decision")),
                                       "intentd.reason": str(entry.get("reason") or "")[:500]})
        if entry.get("decision") == "deny":
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, str(entry.get("reason") or "")[:200]))
        span.end(end_time=int(now * 1e9))

    def shutdown(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)
        self.provider.shutdown()  # sends what is queued, within the exporter's timeout


def _attributes(entry: dict[str, Any], waiting_ms: float) -> dict[str, Any]:
    intent, receipt = entry["intent"], entry["receipt"]
    timing = receipt.get("timing") or {}
    found = {
        "intentd.call_id": intent.get("id"), "intentd.tool": intent.get("tool"),
        "intentd.decision": entry.get("decision"), "intentd.stage": entry.get("stage"),
        "intentd.intent_id": intent.get("intent_id"), "intentd.workspace": intent.get("workspace"),
        "intentd.agent": intent.get("agent"), "intentd.session": intent.get("session"),
        "intentd.result": receipt.get("result"),
        "intentd.decided_ms": float(timing.get("decided_ms") or 0.0),
        "intentd.waiting_for_person_ms": round(waiting_ms, 3),
        "intentd.execution_ms": float(timing.get("execution_ms") or 0.0),
    }
    return {k: v for k, v in found.items() if v is not None}


def _epoch(text: Any, fallback: float) -> float:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return fallback


def _now() -> float:
    return time.time()


def spans_from_environment() -> CallSpans | None:
    """CallSpans exporting to the OTLP endpoint the environment names; None when telemetry is
    off (no endpoint, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none) or the extra is missing."""
    if not any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
        return None
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true" or \
            os.environ.get("OTEL_TRACES_EXPORTER", "").lower() == "none":
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("an OTLP endpoint is set but OpenTelemetry is not installed: "
                    "pip install 'intentd[otel]'; no spans are sent")
        return None
    exporter = _exporter()
    if exporter is None:
        return None
    provider = TracerProvider(resource=Resource.create({"service.name": "intentd",
                                                        "service.version": __version__}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return CallSpans(provider)


def _exporter() -> Any:
    """OTLP over HTTP with protobuf (the default), or gRPC when OTEL_EXPORTER_OTLP_PROTOCOL says
    so and its exporter is installed."""
    protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf")
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[assignment,unused-ignore]
                OTLPSpanExporter,
            )
    except ImportError:
        log.warning("no OTLP exporter for protocol %s is installed; no spans are sent", protocol)
        return None
    return OTLPSpanExporter()
