"""A new intent: id, name, status, owned_scope, constraints and acceptance criteria."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from intentd.daemon import protocol
from intentd.gui.connection import RpcFailure
from intentd.gui.intents_edit import IntentsEditor, failure_text, scope_lines

STATUSES = ("PENDING", "IN_PROGRESS", "BLOCKED", "COMPLETED", "ABANDONED")


class NewIntentDialog(QDialog):
    """Refusals (a duplicate id, an empty name) come back with the file's line and stay shown."""

    def __init__(self, editor: IntentsEditor, workspace: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor, self.workspace = editor, workspace
        self.base_sha256: str | None = None
        self.setWindowTitle("New intent")
        self.intent_id = QLineEdit(self)
        self.name = QLineEdit(self)
        self.status = QComboBox(self)
        self.status.addItems(STATUSES)
        self.status.setCurrentText("IN_PROGRESS")
        self.scope = QPlainTextEdit(self)
        self.scope.setPlaceholderText("src/feature/**\n!src/feature/secrets/**")
        self.constraints = QPlainTextEdit(self)
        self.criteria = QPlainTextEdit(self)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        for label, widget in (("&Id", self.intent_id), ("&Name", self.name),
                              ("&Status", self.status), ("Owned s&cope", self.scope),
                              ("C&onstraints", self.constraints),
                              ("&Acceptance criteria", self.criteria)):
            form.addRow(label, widget)
        form.addRow(self.message)
        form.addRow(self.buttons)
        editor.read(workspace, self._on_read, self._on_failure)

    def _on_read(self, snap: dict[str, Any]) -> None:
        self.base_sha256 = str(snap["sha256"])
        known = [str(s) for s in snap.get("statuses") or []]
        for status in known:
            if self.status.findText(status) < 0:
                self.status.addItem(status)

    def fields(self) -> dict[str, Any]:
        def lines(edit: QPlainTextEdit) -> list[str]:
            return [s.strip() for s in edit.toPlainText().splitlines() if s.strip()]

        return {"id": self.intent_id.text().strip(), "name": self.name.text().strip(),
                "status": self.status.currentText(),
                "owned_scope": scope_lines(self.scope.toPlainText()),
                "constraints": lines(self.constraints), "acceptance_criteria": lines(self.criteria)}

    def save(self) -> None:
        if self.base_sha256 is None:
            self.message.setText("The intents file has not been read yet.")
            return
        self.editor.edit(protocol.INTENTS_CREATE, self.workspace, self.base_sha256,
                         {"intent": self.fields()}, lambda _answer: self.accept(),
                         self._on_failure)

    def _on_failure(self, failure: RpcFailure) -> None:
        self.message.setText(failure_text(failure))
        if failure.code == protocol.INTENTS_CONFLICT:
            self.editor.read(self.workspace, self._on_read, None)  # the next save may go through
