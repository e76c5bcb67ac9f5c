"""An in-process QLocalServer speaking just enough of the protocol to test the connection."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from intentd.daemon import protocol

Handler = Callable[[dict[str, Any]], Any]


class FakeDaemon(QObject):
    """Answers initialize and events/subscribe; other methods from `handlers` (or -32601)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.handlers: dict[str, Handler] = {}
        self.requests: list[dict[str, Any]] = []
        self.clients: list[QLocalSocket] = []
        self.silent: set[str] = set()  # methods left unanswered
        self.server = QLocalServer(self)
        self.server.newConnection.connect(self._on_server_new_connection)

    def start(self) -> FakeDaemon:
        QLocalServer.removeServer(str(self.path))
        assert self.server.listen(str(self.path)), self.server.errorString()
        return self

    def stop(self) -> None:
        for client in self.clients:
            client.abort()
        self.clients.clear()
        self.server.close()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        for client in self.clients:
            client.write(protocol.encode(protocol.notification(method, params)))

    def send_raw(self, data: bytes) -> None:
        for client in self.clients:
            client.write(data)

    def methods(self) -> list[str]:
        return [r["method"] for r in self.requests]

    def _on_server_new_connection(self) -> None:
        while self.server.hasPendingConnections():
            client = self.server.nextPendingConnection()
            buffer = bytearray()
            client.readyRead.connect(lambda c=client, b=buffer: self._on_client_ready_read(c, b))
            self.clients.append(client)

    def _on_client_ready_read(self, client: QLocalSocket, buffer: bytearray) -> None:
        buffer += bytes(client.readAll().data())
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            request = json.loads(line)
            self.requests.append(request)
            if request["method"] not in self.silent:
                client.write(protocol.encode(self._answer(request)))

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request["method"], request.get("params") or {}
        if method == protocol.INITIALIZE:
            return protocol.result(request["id"], {"protocol_version": 1, "server": "fake",
                                                   "pid": 1})
        if method == protocol.EVENTS_SUBSCRIBE:
            return protocol.result(request["id"], {"subscribed": list(protocol.NOTIFICATIONS)})
        handler = self.handlers.get(method)
        if handler is None:
            return protocol.error(request["id"], protocol.METHOD_NOT_FOUND, f"no {method}")
        try:
            return protocol.result(request["id"], handler(params))
        except LookupError as exc:
            return protocol.error(request["id"], protocol.UNKNOWN_APPROVAL, str(exc))
