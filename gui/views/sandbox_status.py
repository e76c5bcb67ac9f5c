"""Always-visible sandbox state: whether the daemon confines commands, in the status bar."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from intentd.gui.connection import ConnectionState, DaemonConnection
from intentd.gui.state.activity import ActivityLog
from intentd.gui.state.records import LedgerEntry
from intentd.gui.theme import colors


class SandboxStatus(QLabel):
    """Said on connecting (the daemon's `initialize` answer) and again by every command's
    receipt, so a daemon that runs commands unconfined is never silent about it."""

    def __init__(self, connection: DaemonConnection, activity: ActivityLog,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._connection = connection
        connection.state_changed.connect(self._on_connection_state_changed)
        activity.entry_added.connect(self._on_activity_entry_added)
        self.hide()

    def _on_connection_state_changed(self, state: str) -> None:
        sandbox = self._connection.server_info.get("sandbox")
        if state == ConnectionState.CONNECTED and isinstance(sandbox, dict):
            self.show_state(bool(sandbox.get("confined")), str(sandbox.get("summary", "")))

    def _on_activity_entry_added(self, entry: LedgerEntry) -> None:
        if entry.confined is not None:
            self.show_state(entry.confined, entry.sandbox_note or self.toolTip())

    def show_state(self, confined: bool, detail: str) -> None:
        theme = colors()
        color, text = ((theme.ok, "Commands confined") if confined
                       else (theme.bad, "Commands run UNCONFINED"))
        self.setText(f"<span style='color:{color.name()}'>■</span> {text}")
        self.setToolTip(detail)
        self.setAccessibleName(f"{text}: {detail}" if detail else text)
        self.show()

