"""Widening of auto-approval that a script asked for: the person allows or refuses it here."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection, RpcFailure
from intentd.gui.state.workspaces import WorkspaceRegistry


class SettingsRequestsPanel(QWidget):
    """One row per waiting request of the workspace shown (settings/get's `pending`); the
    daemon's notifications keep them current. Hidden when nothing waits."""

    def __init__(self, registry: WorkspaceRegistry, connection: DaemonConnection,
                 labels: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry, self.connection, self.labels = registry, connection, labels
        self.workspace: str | None = None
        self.rows: dict[str, tuple[QPushButton, QPushButton]] = {}
        self.status = QLabel(self)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        connection.notification_received.connect(self._on_connection_notification_received)
        self.hide()

    def show_requests(self, workspace: str | None, pending: list[dict[str, Any]]) -> None:
        self.workspace = workspace
        while self._layout.count():
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None and widget is not self.status:
                widget.deleteLater()
        self.rows = {}
        for request in pending:
            self._layout.addWidget(self._row(request))
        self._layout.addWidget(self.status)
        self.setVisible(bool(pending) or bool(self.status.text()))

    def _row(self, request: dict[str, Any]) -> QWidget:
        row = QWidget(self)
        changes = ", ".join(self._describe(k, v) for k, v in
                            dict(request.get("auto_approve") or {}).items())
        text = QLabel(f"<b>A program asks to let more run without asking you:</b> "
                      f"{html.escape(changes)}<br><small>asked by "
                      f"{html.escape(str(request.get('requested_by') or 'a client'))}</small>", row)
        text.setWordWrap(True)
        allow, refuse = QPushButton("Allow", row), QPushButton("Refuse", row)
        request_id = str(request.get("id"))
        allow.clicked.connect(lambda: self._answer(request_id, protocol.APPROVE))
        refuse.clicked.connect(lambda: self._answer(request_id, protocol.REJECT))
        layout = QHBoxLayout(row)
        layout.addWidget(text, 1)
        layout.addWidget(allow)
        layout.addWidget(refuse)
        self.rows[request_id] = (allow, refuse)
        return row

    def _describe(self, key: str, value: Any) -> str:
        if key == "max_consecutive":
            return f"auto-approvals in a row: {value or 'no limit'}"
        return f"{self.labels.get(key, key)}: {'on' if value else 'off'}"

    def _answer(self, request_id: str, decision: str) -> None:
        workspace = self.workspace
        if workspace is None:
            return
        self.status.setText("")
        for button in self.rows.get(request_id, ()):
            button.setEnabled(False)

        def failed(failure: RpcFailure) -> None:
            self.status.setText(f"Could not answer: {failure.message}")
            self._reload(workspace)

        self.connection.request(protocol.SETTINGS_CONFIRM, {
            "workspace": workspace, "confirmation_id": request_id, "decision": decision},
            lambda result: self.registry.set_settings(workspace, result), failed)

    def _on_connection_notification_received(self, method: str, params: dict[str, Any]) -> None:
        if method in (protocol.SETTINGS_REQUESTED, protocol.SETTINGS_RESOLVED):
            workspace = params.get("workspace")
            if isinstance(workspace, str) and workspace == self.workspace:
                self._reload(workspace)

    def _reload(self, workspace: str) -> None:
        self.connection.request(protocol.SETTINGS_GET, {"workspace": workspace},
                                lambda result: self.registry.set_settings(workspace, result))
