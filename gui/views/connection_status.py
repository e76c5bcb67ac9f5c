"""Always-visible connection state: a coloured dot and a sentence, in the status bar."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from intentd.gui.connection import ConnectionState, DaemonConnection
from intentd.gui.theme import colors

# What the main window says while a daemon it started comes up: stale once connected.
STARTING = "Starting the daemon…"


class ConnectionStatus(QLabel):
    def __init__(self, connection: DaemonConnection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._connection = connection
        connection.state_changed.connect(self._on_connection_state_changed)
        self._on_connection_state_changed(connection.state)

    def _on_connection_state_changed(self, state: str) -> None:
        theme = colors()
        info = self._connection.server_info
        if state == ConnectionState.CONNECTED:
            color, text = theme.ok, (f"Connected to {info.get('server', 'intentd')}"
                                     + (f" (pid {info['pid']})" if info.get("pid") else ""))
        elif state in (ConnectionState.CONNECTING, ConnectionState.HANDSHAKE):
            color, text = theme.busy, "Connecting…"
        else:
            color, text = theme.bad, "Disconnected — reconnecting by itself"
        self.setText(f"<span style='color:{color.name()}'>●</span> {text}")
        error = self._connection.last_error
        self.setToolTip(f"Socket: {self._connection.socket_path}" + (f"\n{error}" if error else ""))
        self.setAccessibleName(text)
        bar = self.parent()
        if (state == ConnectionState.CONNECTED and isinstance(bar, QStatusBar)
                and bar.currentMessage() == STARTING):
            bar.clearMessage()
