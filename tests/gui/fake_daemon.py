"""An in-process QLocalServer speaking just enough of the protocol to test the connection."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection
from tests.gui.factories import intent_json, ledger_json

Handler = Callable[[dict[str, Any]], Any]
PING = "test/ping"  # answered with {}: see caught_up()


class FakeDaemon(QObject):
    """Answers initialize and events/subscribe; other methods from `handlers` (or -32601)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.handlers: dict[str, Handler] = {PING: lambda p: {}}
        self.pending: list[dict[str, Any]] = []  # approvals, for loading_handlers()
        self.requests: list[dict[str, Any]] = []
        self.clients: list[QLocalSocket] = []
        self.silent: set[str] = set()  # methods left unanswered
        self.held: set[str] = set()  # methods answered only at release(), after later ones
        self._holding: list[tuple[QLocalSocket, dict[str, Any]]] = []
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
            if request["method"] in self.held:
                self._holding.append((client, request))
            elif request["method"] not in self.silent:
                client.write(protocol.encode(self._answer(request)))

    def release(self) -> None:
        """Answer the held requests now, in the order they came (as a daemon that answers
        concurrently may: after requests sent later)."""
        self.held.clear()
        holding, self._holding = self._holding, []
        for client, request in holding:
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
        except ValueError as exc:
            return protocol.error(request["id"], protocol.INVALID_PARAMS, str(exc))

    def params_of(self, method: str) -> list[dict[str, Any]]:
        """The params of each request of `method` received so far, in order."""
        return [r.get("params") or {} for r in self.requests if r["method"] == method]


def loading_handlers(approvals: list[dict[str, Any]], workspace: str) -> dict[str, Handler]:
    """Answers to what the app asks after a connect: the approvals, one workspace with INT-1
    selected by s-1 (and, as a daemon would, every workspace an approval waits in), one ledger
    entry per workspace, no checkpoints, policy defaults."""
    others = sorted({str(a["workspace"]) for a in approvals} - {workspace})
    return {
        protocol.APPROVALS_LIST: lambda p: {"approvals": approvals},
        protocol.WORKSPACES_LIST: lambda p: {"workspaces": [
            {"workspace": workspace, "sessions": 1, "pending": 1, "errors": []},
            *({"workspace": w, "sessions": 0, "pending": 1, "errors": []} for w in others)]},
        protocol.INTENTS_LIST: lambda p: {
            "workspace": p["workspace"], "intents": [intent_json()], "error": None,
            "warnings": [], "selected": {"s-1": "INT-1"}},
        protocol.LEDGER_QUERY: lambda p: {"entries": [ledger_json(p["workspace"])]},
        protocol.CHECKPOINTS_LIST: lambda p: {"checkpoints": []},
        protocol.SETTINGS_GET: lambda p: {"workspace": p["workspace"], "policy": {},
                                          "overrides": {}, "error": None},
    }


def caught_up(qtbot: QtBot, connection: DaemonConnection) -> None:
    """Wait until the fake has read every request sent so far (it answers them in order)."""
    with qtbot.waitCallback(timeout=5000) as callback:
        connection.request(PING, {}, callback)
