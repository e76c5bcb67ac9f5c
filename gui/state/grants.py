"""Grants and approvers as the app knows them, kept in step with the daemon on its own."""

# Loaded on every (re)connect and on the daemon's grants/* and approvers/changed notifications.
# One per connection (grants_state()): the approvals pane and the settings pane share it.

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from intentd.daemon import protocol
from intentd.gui.connection import ConnectionState, DaemonConnection

GRANT_NOTIFICATIONS = (protocol.GRANTS_CHANGED, protocol.GRANTS_REQUESTED,
                       protocol.GRANTS_RESOLVED)


class GrantsState(QObject):
    grants_changed = Signal()
    approvers_changed = Signal(object)  # int, or None while disconnected

    def __init__(self, connection: DaemonConnection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.connection = connection
        self.grants: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.approvers: int | None = None
        connection.state_changed.connect(self._on_connection_state_changed)
        connection.notification_received.connect(self._on_connection_notification_received)
        if connection.state == ConnectionState.CONNECTED:
            self.reload()

    def in_workspace(self, workspace: str | None) -> tuple[list[dict[str, Any]],
                                                           list[dict[str, Any]]]:
        return ([g for g in self.grants if g.get("workspace") == workspace],
                [r for r in self.requests if r.get("workspace") == workspace])

    def reload(self) -> None:
        self.connection.request(protocol.GRANTS_LIST, {}, self._on_grants_list, lambda _f: None)
        self.connection.request(protocol.APPROVALS_LIST, {}, self._on_approvals_list,
                                lambda _f: None)

    def _on_grants_list(self, result: Any) -> None:
        if isinstance(result, dict):
            self.grants = [g for g in result.get("grants") or [] if isinstance(g, dict)]
            self.requests = [r for r in result.get("requests") or [] if isinstance(r, dict)]
            self.grants_changed.emit()

    def _on_approvals_list(self, result: Any) -> None:
        if isinstance(result, dict) and isinstance(result.get("approvers"), int):
            self._set_approvers(result["approvers"])

    def _set_approvers(self, count: int | None) -> None:
        if count != self.approvers:
            self.approvers = count
            self.approvers_changed.emit(count)

    def _on_connection_state_changed(self, state: str) -> None:
        if state == ConnectionState.CONNECTED:
            self.reload()
        else:
            self._set_approvers(None)

    def _on_connection_notification_received(self, method: str, params: Any) -> None:
        if method == protocol.APPROVERS_CHANGED and isinstance(params, dict):
            count = params.get("approvers")
            self._set_approvers(count if isinstance(count, int) else None)
        elif method in GRANT_NOTIFICATIONS:
            self.reload()


def grants_state(connection: DaemonConnection) -> GrantsState:
    """The one GrantsState of this connection."""
    found = connection.findChild(GrantsState)
    return found if isinstance(found, GrantsState) else GrantsState(connection, connection)
