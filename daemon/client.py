"""A small blocking JSON-RPC client for the daemon's socket (CLI, hook adapter, MCP bridge, runner)."""

from __future__ import annotations

import errno
import itertools
import json
import socket
import time
from collections import deque
from pathlib import Path
from typing import Any

from intentd.daemon import protocol

CONNECT_RETRY_SECONDS = 2.0  # a burst of clients may fill the daemon's listen queue for a moment


class DaemonUnavailable(ConnectionError):
    """No daemon answers on the socket."""


class UntrustedDaemon(DaemonUnavailable):
    """The socket or the process behind it is not the user's own: nothing was sent to it."""


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
        """Connect, after checking that the socket and the process behind it are the user's own."""
        if self._sock is not None:
            return self
        problem = protocol.socket_problem(self.socket_path)
        if problem:
            raise UntrustedDaemon(f"refusing to talk to {self.socket_path}: {problem}")
        sock = self._connect_with_retry()
        problem = protocol.peer_problem(sock)
        if problem:
            sock.close()
            raise UntrustedDaemon(f"refusing to talk to {self.socket_path}: {problem}")
        self._sock = sock
        return self

    def _connect_with_retry(self) -> socket.socket:
        deadline = time.monotonic() + CONNECT_RETRY_SECONDS
        delay = 0.005
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(str(self.socket_path))
                return sock
            except OSError as exc:
                sock.close()
                if exc.errno == errno.EAGAIN and time.monotonic() < deadline:
                    time.sleep(delay)  # the listen queue is full: it drains in milliseconds
                    delay = min(delay * 2, 0.1)
                    continue
                raise DaemonUnavailable(f"no intentd daemon at {self.socket_path} "
                                        f"({exc.strerror or exc}); start one with "
                                        "`intentd serve`") from None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def initialize(self, client_name: str,
                   agent_process: dict[str, int] | None = None) -> dict[str, Any]:
        """`agent_process`: the agent this client works for (hook adapters name theirs)."""
        params: dict[str, Any] = {"protocol_version": protocol.PROTOCOL_VERSION,
                                  "client": client_name}
        if agent_process is not None:
            params["agent_process"] = agent_process
        return dict(self.call(protocol.INITIALIZE, params))

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
