"""A small blocking JSON-RPC client for the daemon's socket (CLI, hook adapter, MCP bridge, runner)."""

from __future__ import annotations

import itertools
import json
import socket
from collections import deque
from pathlib import Path
from typing import Any

from intentd.daemon import protocol


class DaemonUnavailable(ConnectionError):
    """No daemon answers on the socket."""


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (error {code})")
        self.code, self.message, self.data = code, message, data


class Client:
    def __init__(self, socket_path: Path | str | None = None, timeout: float | None = 30.0) -> None:
        self.socket_path = Path(socket_path) if socket_path else protocol.default_socket_path()
        self.timeout = timeout
        self.notifications: deque[dict[str, Any]] = deque()
        self._ids = itertools.count(1)
        self._buffer = b""
        self._sock: socket.socket | None = None

    def __enter__(self) -> Client:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> Client:
        if self._sock is not None:
            return self
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self.socket_path))
        except OSError as exc:
            sock.close()
            raise DaemonUnavailable(f"no intentd daemon at {self.socket_path} ({exc.strerror or exc}); "
                                    "start one with `intentd serve`") from None
        self._sock = sock
        return self

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def initialize(self, client_name: str) -> dict[str, Any]:
        return dict(self.call(protocol.INITIALIZE, {"protocol_version": protocol.PROTOCOL_VERSION,
                                                    "client": client_name}))

    def call(self, method: str, params: dict[str, Any] | None = None,
             timeout: float | None = -1.0) -> Any:
        """Send a request and wait for its answer; notifications meanwhile are queued."""
        request_id = next(self._ids)
        self.send(protocol.request(method, params or {}, request_id))
        while True:
            message = self.read_message(self.timeout if timeout == -1.0 else timeout)
            if message.get("id") == request_id and ("result" in message or "error" in message):
                if "error" in message:
                    err = message["error"]
                    raise RpcError(err.get("code", 0), err.get("message", ""), err.get("data"))
                return message["result"]
            if "method" in message and "id" not in message:
                self.notifications.append(message)

    def send(self, message: dict[str, Any] | list[Any]) -> None:
        self.connect()
        assert self._sock is not None
        try:
            self._sock.sendall(protocol.encode(message))
        except OSError as exc:
            raise DaemonUnavailable(f"lost the daemon: {exc}") from None

    def next_notification(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next queued or incoming notification; None when none comes in `timeout` s."""
        if self.notifications:
            return self.notifications.popleft()
        try:
            message = self.read_message(timeout)
        except TimeoutError:
            return None
        return message if "method" in message else None

    def read_message(self, timeout: float | None) -> dict[str, Any]:
        """The next message off the socket (answers and notifications alike)."""
        assert self._sock is not None
        self._sock.settimeout(timeout)
        while b"\n" not in self._buffer:
            try:
                chunk = self._sock.recv(65536)
            except TimeoutError:
                raise TimeoutError("the daemon did not answer in time") from None
            except OSError as exc:
                raise DaemonUnavailable(f"lost the daemon: {exc}") from None
            if not chunk:
                raise DaemonUnavailable("the daemon closed the connection")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message = json.loads(line)
        return message if isinstance(message, dict) else {"batch": message}
