"""The daemon connection: JSON-RPC over a QLocalSocket on the event loop, reconnecting by itself."""

from __future__ import annotations

import itertools
import json
import logging
import os
import socket
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtNetwork import QLocalSocket

from intentd.daemon import protocol
from intentd.gui.framing import LineBuffer

log = logging.getLogger(__name__)

CONNECTION_LOST = -1  # local code: the connection went away before the answer came
RETRY_DELAYS_MS = (250, 500, 1000, 2000)
DRAIN_BUDGET_S = 0.01  # hand the event loop back after this long, so input and paints go on


class ConnectionState(StrEnum):
    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    HANDSHAKE = "handshake"  # socket open, initialize / events/subscribe on their way
    CONNECTED = "connected"


@dataclass(frozen=True)
class RpcFailure:
    code: int
    message: str
    data: Any = None

    def __str__(self) -> str:
        return f"{self.message} (error {self.code})"


OnResult = Callable[[Any], None]
OnError = Callable[[RpcFailure], None]


class DaemonConnection(QObject):
    """One socket to the daemon; requests carry callbacks, notifications come out as a signal."""

    state_changed = Signal(str)
    notification_received = Signal(str, object)
    daemon_missing = Signal()  # the first attempt found no daemon: the app may offer to start one

    def __init__(self, socket_path: Path, client_name: str,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.socket_path = socket_path
        self.client_name = client_name
        self.state = ConnectionState.DISCONNECTED
        self.server_info: dict[str, Any] = {}
        self.last_error = ""
        self.ever_connected = False
        self._wanted = False
        self._failures = 0
        self._missing_reported = False
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[OnResult | None, OnError | None]] = {}
        self._lines = LineBuffer(protocol.MAX_LINE_BYTES)
        self._inbox: deque[bytes] = deque()
        self._socket = QLocalSocket(self)
        self._socket.connected.connect(self._on_socket_connected)
        self._socket.stateChanged.connect(self._on_socket_state_changed)
        self._socket.errorOccurred.connect(self._on_socket_error_occurred)
        self._socket.readyRead.connect(self._on_socket_ready_read)
        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.timeout.connect(self._on_retry_timeout)

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> None:
        """Connect now, and keep reconnecting whenever the daemon goes away."""
        self._wanted = True
        self._retry.stop()
        if self._socket.state() == QLocalSocket.LocalSocketState.UnconnectedState:
            problem = protocol.socket_problem(self.socket_path)
            if problem:  # another user's socket: nothing is sent; try again later
                self._refuse(problem)
                return
            self._set_state(ConnectionState.CONNECTING)
            self._socket.connectToServer(str(self.socket_path))

    def _refuse(self, problem: str) -> None:
        self.last_error = f"refusing to talk to {self.socket_path}: {problem}"
        log.warning("%s", self.last_error)
        self._lost()

    def close(self) -> None:
        self._wanted = False
        self._retry.stop()
        self._socket.abort()
        self._lost()

    def retry_in_ms(self) -> int:
        """How long until the next attempt (0 when none is scheduled)."""
        return self._retry.remainingTime() if self._retry.isActive() else 0

    # -- requests --------------------------------------------------------------------------
    def request(self, method: str, params: dict[str, Any] | None = None,
                on_result: OnResult | None = None, on_error: OnError | None = None) -> int | None:
        """Send a request; exactly one of the callbacks is called later (never synchronously)."""
        if self.state != ConnectionState.CONNECTED:
            failure = RpcFailure(CONNECTION_LOST, "not connected to the daemon")
            if on_error is not None:
                QTimer.singleShot(0, self, lambda: on_error(failure))
            return None
        return self._send(method, params, on_result, on_error)

    def _send(self, method: str, params: dict[str, Any] | None,
              on_result: OnResult | None, on_error: OnError | None) -> int:
        request_id = next(self._ids)
        self._pending[request_id] = (on_result, on_error)
        self._socket.write(protocol.encode(protocol.request(method, params or {}, request_id)))
        return request_id

    # -- socket slots ----------------------------------------------------------------------
    def _on_socket_connected(self) -> None:
        problem = self._peer_problem()
        if problem:
            self._socket.abort()  # before anything is sent
            self.last_error = f"refusing to talk to {self.socket_path}: {problem}"
            log.warning("%s", self.last_error)
            return
        self._set_state(ConnectionState.HANDSHAKE)
        self._send(protocol.INITIALIZE, {"protocol_version": protocol.PROTOCOL_VERSION,
                                         "client": self.client_name},
                   self._on_initialize_result, self._on_handshake_error)

    def _peer_problem(self) -> str | None:
        descriptor = int(self._socket.socketDescriptor())
        if descriptor < 0:
            return "the connection has no socket to check"
        sock = socket.socket(fileno=os.dup(descriptor))
        try:
            problem: str | None = protocol.peer_problem(sock)
            return problem
        finally:
            sock.close()

    def _on_initialize_result(self, result: Any) -> None:
        self.server_info = dict(result) if isinstance(result, dict) else {}
        self._send(protocol.EVENTS_SUBSCRIBE, {}, self._on_subscribe_result,
                   self._on_handshake_error)

    def _on_subscribe_result(self, _result: Any) -> None:
        self._failures = 0
        self.last_error = ""
        self.ever_connected = True
        self._set_state(ConnectionState.CONNECTED)

    def _on_handshake_error(self, failure: RpcFailure) -> None:
        if failure.code != CONNECTION_LOST:
            self.last_error = f"the daemon refused the handshake: {failure}"
            self._socket.abort()

    def _on_socket_error_occurred(self, error: QLocalSocket.LocalSocketError) -> None:
        absent = error in (QLocalSocket.LocalSocketError.ServerNotFoundError,
                           QLocalSocket.LocalSocketError.ConnectionRefusedError)
        if absent:
            self.last_error = f"no daemon at {self.socket_path}"
        elif error != QLocalSocket.LocalSocketError.PeerClosedError:
            self.last_error = self._socket.errorString()
        if absent and not self.ever_connected and not self._missing_reported:
            self._missing_reported = True
            self.daemon_missing.emit()

    def _on_socket_state_changed(self, state: QLocalSocket.LocalSocketState) -> None:
        if state == QLocalSocket.LocalSocketState.UnconnectedState:
            self._lost()

    def _on_retry_timeout(self) -> None:
        if self._wanted:
            self.open()

    def _lost(self) -> None:
        """The socket is closed: fail what waits, and schedule the next attempt."""
        pending, self._pending = self._pending, {}
        self._inbox.clear()
        self._lines.clear()
        failure = RpcFailure(CONNECTION_LOST, "the connection to the daemon was lost")
        for _on_result, on_error in pending.values():
            if on_error is not None:
                self._guarded(on_error, failure)
        if self._wanted and not self._retry.isActive():
            delay = RETRY_DELAYS_MS[min(self._failures, len(RETRY_DELAYS_MS) - 1)]
            self._failures += 1
            self._retry.start(delay)
        self._set_state(ConnectionState.DISCONNECTED)

    def _set_state(self, state: ConnectionState) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state.value)

    # -- incoming messages -----------------------------------------------------------------
    def _on_socket_ready_read(self) -> None:
        self._inbox.extend(self._lines.feed(bytes(self._socket.readAll().data())))
        self._drain()

    def _drain(self) -> None:
        """Dispatch queued messages in order, yielding to the event loop after a time budget."""
        deadline = time.perf_counter() + DRAIN_BUDGET_S
        while self._inbox:
            if time.perf_counter() > deadline:
                QTimer.singleShot(0, self, self._drain)
                return
            self._dispatch_line(self._inbox.popleft())

    def _dispatch_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            log.warning("ignoring a line that is not JSON: %.80r", line)
            return
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict):
                self._dispatch(item)

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" not in message:
            params = message.get("params")
            self._guarded(self.notification_received.emit, str(message["method"]),
                          params if isinstance(params, dict) else {})
            return
        request_id = message.get("id")
        callbacks = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if callbacks is None:
            return
        on_result, on_error = callbacks
        if "error" in message:
            err = message["error"] if isinstance(message["error"], dict) else {}
            failure = RpcFailure(int(err.get("code", protocol.INTERNAL_ERROR)),
                                 str(err.get("message", "error")), err.get("data"))
            if on_error is not None:
                self._guarded(on_error, failure)
            else:
                log.warning("request %s failed: %s", request_id, failure)
        elif on_result is not None:
            self._guarded(on_result, message.get("result"))

    @staticmethod
    def _guarded(fn: Callable[..., Any], *args: Any) -> None:
        # One failing handler must not drop the messages queued behind it; the exception still
        # goes to sys.excepthook (where pytest-qt turns it into a test failure).
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - reported through sys.excepthook, never dropped
            sys.excepthook(*sys.exc_info())
