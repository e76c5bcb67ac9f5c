"""Whether the workspace's ledger still holds as written: its hash chain, verified by the daemon."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection, RpcFailure
from intentd.gui.theme import colors


class ChainStatus(QWidget):
    """The daemon walks the chain on a worker thread (`ledger/verify`); the app only waits for
    the answer, so a long ledger never freezes the window."""

    def __init__(self, connection: DaemonConnection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.connection = connection
        self.workspace: str | None = None
        self.label = QLabel(self)
        self.button = QPushButton("&Verify ledger", self)
        self.button.setToolTip("Check that no line of the ledger was changed, removed or inserted")
        self.button.clicked.connect(self.verify)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        self.button.setEnabled(False)

    def set_workspace(self, path: str | None) -> None:
        self.workspace = path
        self.button.setEnabled(path is not None)
        self.label.clear()
        self.verify()

    def verify(self) -> None:
        workspace = self.workspace
        if workspace is None:
            return
        self.label.setText("Verifying the ledger…")
        self.connection.request(protocol.LEDGER_VERIFY, {"workspace": workspace},
                                lambda answer: self._on_answer(workspace, answer),
                                lambda failure: self._on_failure(workspace, failure))

    def _on_answer(self, workspace: str, answer: Any) -> None:
        if workspace != self.workspace or not isinstance(answer, dict):
            return
        theme = colors()
        if answer.get("ok"):
            text = f"Ledger chain holds ({answer.get('chained', 0)} line(s))"
            color = theme.ok
        else:
            text = f"Ledger chain BROKEN: {answer.get('problem')}"
            color = theme.bad
        self.label.setText(f"<span style='color:{color.name()}'>■</span> {text}")
        notes = answer.get("notes") or []
        self.label.setToolTip("\n".join(str(n) for n in notes))
        self.label.setAccessibleName(text)

    def _on_failure(self, workspace: str, failure: RpcFailure) -> None:
        if workspace == self.workspace:
            self.label.setText(f"Could not verify the ledger: {failure.message}")
