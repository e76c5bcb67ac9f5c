"""The approval queue: the pending calls, the one selected in detail, approve and reject."""

from __future__ import annotations

import json

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.commands import DaemonCommands
from intentd.gui.diff.view import DiffPane
from intentd.gui.models.approvals import ApprovalsModel
from intentd.gui.state.records import Approval
from intentd.gui.views.tables import make_table


class ApprovalsPane(QWidget):
    """Newest first. After an answer the next request is selected, so a person can go on."""

    def __init__(self, model: ApprovalsModel, commands: DaemonCommands,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.commands = commands
        self._reselect_row: int | None = None
        self._current_id: str | None = None
        self.table = make_table(self, "Pending approvals", model, (70, 130, 230, 100, 110, 80))
        self.heading = QLabel(self)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        font = self.heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.heading.setFont(font)
        self.facts = QFormLayout()
        self._fact_labels = {name: self._fact(name) for name in
                             ("Workspace", "Session", "Intent", "Why a person", "Batch")}
        self.diff = DiffPane(self)
        self.args = QPlainTextEdit(self)
        self.args.setReadOnly(True)
        self.args.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.args.setAccessibleName("Arguments")
        self.body = QStackedWidget(self)
        self.body.addWidget(self.diff)
        self.body.addWidget(self.args)
        self.feedback = QLineEdit(self)
        self.feedback.setPlaceholderText("Feedback for the agent, sent with a rejection "
                                         "(Enter rejects)")
        self.feedback.setAccessibleName("Feedback")
        self.feedback.returnPressed.connect(self.reject_current)
        self.approve_button = QPushButton("&Approve   Ctrl+Return", self)
        self.reject_button = QPushButton("&Reject   Ctrl+Backspace", self)
        self.approve_button.clicked.connect(self.approve_current)
        self.reject_button.clicked.connect(self.reject_current)
        self.empty = QLabel("Nothing waits for you. Requests that need a person appear here.",
                            self)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._layout()
        selection = self.table.selectionModel()
        selection.currentRowChanged.connect(self._on_selection_current_row_changed)
        model.rowsAboutToBeRemoved.connect(self._on_model_rows_about_to_be_removed)
        model.rowsRemoved.connect(self._on_model_rows_removed)
        model.rowsInserted.connect(self._on_model_rows_inserted)
        model.modelReset.connect(self._on_model_reset)
        self.setFocusProxy(self.table)
        self._show(None)

    def _fact(self, name: str) -> QLabel:
        label = QLabel(self)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        self.facts.addRow(f"{name}:", label)
        return label

    def _layout(self) -> None:
        detail = QWidget(self)
        answer = QHBoxLayout()
        answer.addWidget(self.feedback, 1)
        answer.addWidget(self.reject_button)
        answer.addWidget(self.approve_button)
        column = QVBoxLayout(detail)
        column.setContentsMargins(0, 4, 0, 0)
        column.addWidget(self.heading)
        column.addLayout(self.facts)
        column.addWidget(self.body, 1)
        column.addLayout(answer)
        self.detail_stack = QStackedWidget(self)
        self.detail_stack.addWidget(self.empty)
        self.detail_stack.addWidget(detail)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.detail_stack)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 5)
        split.setSizes([220, 480])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    # -- actions -----------------------------------------------------------------------------
    def current(self) -> Approval | None:
        index = self.table.currentIndex()
        return self.model.approval_at(index.row()) if index.isValid() else None

    def approve_current(self) -> None:
        approval = self.current()
        if approval is not None:
            self.commands.approve(approval.id)

    def reject_current(self) -> None:
        approval = self.current()
        if approval is not None:
            self.commands.reject(approval.id, self.feedback.text().strip())

    def select_row(self, row: int) -> None:
        if 0 <= row < self.model.rowCount():
            index = self.model.index(row, 0)
            self.table.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)
            self.table.scrollTo(index)

    # -- keeping a sensible selection ----------------------------------------------------------
    def _on_model_rows_about_to_be_removed(self, _parent: QModelIndex | QPersistentModelIndex,
                                           first: int, last: int) -> None:
        row = self.table.currentIndex().row()
        if first <= row <= last:
            self._reselect_row = first  # the next (older) request slides into this row

    def _on_model_rows_removed(self, *_args: object) -> None:
        row, self._reselect_row = self._reselect_row, None
        if row is not None:
            self.select_row(min(row, self.model.rowCount() - 1))
        if self.model.rowCount() == 0:
            self._show(None)

    def _on_model_rows_inserted(self, *_args: object) -> None:
        if not self.table.currentIndex().isValid():
            self.select_row(0)

    def _on_model_reset(self) -> None:
        row = self.model.row_of(self._current_id) if self._current_id else -1
        self.select_row(max(row, 0))
        if self.model.rowCount() == 0:
            self._show(None)

    def _on_selection_current_row_changed(self, current: QModelIndex, _previous: QModelIndex
                                          ) -> None:
        self._show(self.model.approval_at(current.row()) if current.isValid() else None)

    def _show(self, approval: Approval | None) -> None:
        if approval is not None and approval.id == self._current_id:
            return
        self._current_id = approval.id if approval else None
        self.approve_button.setEnabled(approval is not None)
        self.reject_button.setEnabled(approval is not None)
        if approval is None:
            self.detail_stack.setCurrentIndex(0)
            return
        self.detail_stack.setCurrentIndex(1)
        self.feedback.clear()
        self.heading.setText(f"{approval.tool}  {approval.target.splitlines()[0]}"
                             if approval.target else approval.tool)
        facts = {"Workspace": approval.workspace,
                 "Session": f"{approval.session_id} ({approval.agent or 'unknown agent'})",
                 "Intent": approval.intent_id or "none selected",
                 "Why a person": f"{approval.reason} [{approval.stage}]",
                 "Batch": approval.batch or "—"}
        for name, value in facts.items():
            self._fact_labels[name].setText(value)
        if approval.diff:
            self.diff.set_diff(approval.diff, str(approval.args.get("path") or ""),
                               str(approval.args.get("path") or ""))
            self.body.setCurrentWidget(self.diff)
        else:
            self.args.setPlainText(_describe_args(approval))
            self.body.setCurrentWidget(self.args)


def _describe_args(approval: Approval) -> str:
    command = approval.args.get("command")
    if isinstance(command, str):
        return f"$ {command}\n\n" + json.dumps(approval.args, indent=2, ensure_ascii=False)
    return json.dumps(approval.args, indent=2, ensure_ascii=False)
