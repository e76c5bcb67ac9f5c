"""OpenTelemetry: each decided call a span, exported over OTLP when the environment names where.

Off unless an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or ..._TRACES_ENDPOINT) and the
`intentd[otel]` extra is installed. The exporter reads the other standard variables itself
(headers, timeout, certificates, protocol). Nothing is done on a call's path but a queue put:
spans are made, batched and sent by a process of their own (intentd.daemon.trace.otel_export).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Any

log = logging.getLogger(__name__)
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
MAX_QUEUED = 10_000  # calls waiting to become spans; past this they are counted, not kept


class CallSpans:
    """Hands each decided call to the telemetry process (intentd.daemon.trace.otel_export). A
    call only queues its entry; a thread of ours writes it to the process's pipe."""

    def __init__(self, command: list[str]) -> None:
        self.dropped = 0
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         start_new_session=True)
        self._queue: queue.Queue[tuple[dict[str, Any], float] | None] = queue.Queue(MAX_QUEUED)
        self._thread = threading.Thread(target=self._send, name="intentd-otel", daemon=True)
        self._thread.start()

    def call_decided(self, entry: dict[str, Any]) -> None:
        try:
            self._queue.put_nowait((entry, time.time()))
        except queue.Full:  # a collector that cannot keep up costs spans, never a call's time
            self.dropped += 1

    def _send(self) -> None:
        pipe = self._process.stdin
        assert pipe is not None
        while (item := self._queue.get()) is not None:
            try:
                pipe.write(json.dumps(item, default=str).encode() + b"\n")
                if self._queue.empty():
                    pipe.flush()
            except (OSError, ValueError):
                log.warning("the telemetry process is gone; no more spans are sent")
                return

    def shutdown(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)
        with contextlib.suppress(OSError, ValueError):
            if self._process.stdin is not None:
                self._process.stdin.close()  # the process sends what it holds, then exits
        try:
            self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def spans_from_environment() -> CallSpans | None:
    """CallSpans exporting to the OTLP endpoint the environment names; None when telemetry is
    off (no endpoint, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none) or the extra is missing."""
    if not any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
        return None
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true" or \
            os.environ.get("OTEL_TRACES_EXPORTER", "").lower() == "none":
        return None
    if not _installed("opentelemetry.sdk") or exporter_module() is None:
        log.warning("an OTLP endpoint is set but intentd[otel] is not installed (or has no "
                    "exporter for the protocol asked for): pip install 'intentd[otel]'; no "
                    "spans are sent")
        return None
    return CallSpans([sys.executable, "-m", "intentd.daemon.trace.otel_export"])


def _protocol() -> str:
    return (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf")


def exporter_module() -> str | None:
    """OTLP over HTTP with protobuf (the default), or gRPC when OTEL_EXPORTER_OTLP_PROTOCOL says
    so and its exporter is installed."""
    name = ("opentelemetry.exporter.otlp.proto.grpc.trace_exporter" if _protocol() == "grpc"
            else "opentelemetry.exporter.otlp.proto.http.trace_exporter")
    return name if _installed(name) else None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def exporter() -> Any:
    """The exporter; it reads the endpoint, headers, timeout and certificates from OTEL_*."""
    module = exporter_module()
    if module is None:
        raise RuntimeError(f"no OTLP exporter for protocol {_protocol()} is installed")
    return importlib.import_module(module).OTLPSpanExporter()
