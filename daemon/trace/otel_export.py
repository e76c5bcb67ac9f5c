"""The telemetry process: reads finished calls from its standard input, sends them as spans.

Started by intentd.daemon.trace.otel with the daemon's environment. Making and encoding spans
costs about 0.1 ms of Python per call; in a process of its own that runs beside the daemon
instead of taking turns with it for the interpreter lock.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime
from typing import Any

from intentd.daemon import __version__

log = logging.getLogger(__name__)
AUTOMATIC = ("auto", None)  # approved_by of calls no person answered


def make_provider() -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from intentd.daemon.trace.otel import exporter

    provider = TracerProvider(resource=Resource.create({"service.name": "intentd",
                                                        "service.version": __version__}))
    provider.add_span_processor(BatchSpanProcessor(exporter()))
    return provider


def make_span(tracer: Any, entry: dict[str, Any], now: float) -> None:
    """One call's span, with the times the call really had, and its approval as an event."""
    intent, receipt = entry["intent"], entry["receipt"]
    timing = receipt.get("timing") or {}
    started = _epoch(timing.get("started_at") or intent.get("time"), now)
    decided_ms = float(timing.get("decided_ms") or 0.0)
    execution_ms = float(timing.get("execution_ms") or 0.0)
    waiting_ms = max(0.0, max(0.0, (now - started) * 1000) - decided_ms - execution_ms)
    span = tracer.start_span(f"intentd {intent.get('tool')}", start_time=int(started * 1e9),
                             attributes=_attributes(entry, waiting_ms))
    answered_by = entry.get("approved_by")
    # a person's (or a grant's) answer: approved, or rejected / timed out at the approval stage
    if answered_by not in AUTOMATIC or (entry.get("stage") == "approval"
                                        and entry.get("decision") == "deny"):
        span.add_event("approval", timestamp=int((started + (decided_ms + waiting_ms) / 1000) * 1e9),
                       attributes={"intentd.approved_by": str(answered_by or ""),
                                   "intentd.decision": str(entry.get("decision")),
                                   "intentd.reason": str(entry.get("reason") or "")[:500]})
    if entry.get("decision") == "deny":
        from opentelemetry.trace import Status, StatusCode

        span.set_status(Status(StatusCode.ERROR, str(entry.get("reason") or "")[:200]))
    span.end(end_time=int(now * 1e9))


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


def main() -> int:
    provider = make_provider()
    tracer = provider.get_tracer("intentd", __version__)
    for line in sys.stdin.buffer:  # until the daemon closes the pipe
        try:
            entry, now = json.loads(line)
            make_span(tracer, entry, float(now))
        except Exception:  # noqa: BLE001 - one bad call never stops the others' spans
            log.exception("could not make the span of a call")
    provider.shutdown()  # sends what is queued, within the exporter's timeout
    return 0


if __name__ == "__main__":
    sys.exit(main())
