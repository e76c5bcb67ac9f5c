"""What every fake model API shares: a threaded HTTP server on loopback, quiet handlers, and
answers as one JSON body or as server-sent events."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers JSON or an event stream."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("content-length", 0)))

    def send_json(self, status: int, payload: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events: Iterable[str], headers: dict[str, str] | None = None) -> None:
        """Each event text (`data: …` lines and the blank line) written and flushed as it comes,
        then the connection closed, as the real APIs stream."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        for event in events:
            self.wfile.write(event.encode())
            self.wfile.flush()
        self.close_connection = True


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 (a free port), serving from `with` to its end.

    Subclasses give the handler class (`_handler`) and, where the API lives under a path,
    `base_path` (what a client is told the base URL ends with)."""

    base_path = ""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}{self.base_path}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
