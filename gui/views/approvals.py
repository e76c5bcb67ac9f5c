"""The approval queue: the pending calls, the one selected in detail, approve and reject."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
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
from intentd.gui.views.tables import make_table, reselect, select_row


class ApprovalsPane(QWidget):
    """Newest first. An answer goes to the request whose detail is shown, and only once.

    The request shown can change under the person's hand: it leaves the queue (answered,
    withdrawn), or one arrives into an empty queue. So Approve and Reject wait SETTLE_MS after
    every change of the request shown, and while an answer is on its way: a click or a keypress
    meant for one request never lands on the next. After an answer the next request is shown.
    """

    SETTLE_MS = 500
    FEEDBACK_NOT_APPROVED = ("Not approved — feedback is for a rejection: clear it to approve, "
                             "or press Ctrl+Backspace to reject.")
    NOT_YET = "Not answered: the request shown has just changed. Read it, then answer."

    answer_withheld = Signal(str)  # why a click or keypress did not answer, for the status bar

    def __init__(self, model: ApprovalsModel, commands: DaemonCommands,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.commands = commands
        self._current_id: str | None = None  # the request whose detail is shown
        self._sent: set[str] = set()  # ids answered: never answered twice
        self._awaiting: str | None = None  # the id whose answer is on its way
        self._next_row: int | None = None  # where the shown request was, while it is removed
        self._settle = QTimer(self, singleShot=True, interval=self.SETTLE_MS)
        self._settle.timeout.connect(self._update_buttons)
        # Before the table takes the model: this must run before the view's own handler, which
        # moves the current row off a row being removed.
        model.rowsAboutToBeRemoved.connect(self._on_model_rows_about_to_be_removed)
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
        model.rowsRemoved.connect(self._on_model_rows_removed)
        model.rowsInserted.connect(self._on_model_rows_inserted)
        model.modelReset.connect(self._on_model_reset)
        commands.answer_not_taken.connect(self._on_commands_answer_not_taken)
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

    def answerable(self) -> bool:
        """Whether Approve and Reject act now on the request shown."""
        return (self._current_id is not None and self._current_id not in self._sent
                and self._awaiting is None and not self._settle.isActive())

    def approve_current(self) -> None:
        if self._current_id is not None and self.feedback.text().strip():
            # Approving would throw the feedback away: the person most likely meant to reject.
            self.answer_withheld.emit(self.FEEDBACK_NOT_APPROVED)
            return
        self._answer(self.commands.approve)

    def reject_current(self) -> None:
        feedback = self.feedback.text().strip()
        self._answer(lambda approval_id: self.commands.reject(approval_id, feedback))

    def _answer(self, send: Callable[[str], None]) -> None:
        """Answer the request shown, if it may be answered now."""
        approval_id = self._current_id
        if approval_id is not None and self._settle.isActive():
            self.answer_withheld.emit(self.NOT_YET)
        if approval_id is None or not self.answerable():
            return
        self._sent.add(approval_id)
        self._awaiting = approval_id
        self._update_buttons()
        send(approval_id)

    def select_row(self, row: int) -> None:
        select_row(self.table, row)

    def _update_buttons(self) -> None:
        answerable = self.answerable()
        self.approve_button.setEnabled(answerable)
        self.reject_button.setEnabled(answerable)

    # -- keeping a sensible selection ----------------------------------------------------------
    def _on_model_rows_about_to_be_removed(self, _parent: QModelIndex | QPersistentModelIndex,
                                           first: int, last: int) -> None:
        removed = {a.id for a in map(self.model.approval_at, range(first, last + 1)) if a}
        if self._current_id in removed:
            self._next_row = first  # the next (older) request slides into this row
        if self._awaiting in removed:
            self._awaiting = None

    def _on_model_rows_removed(self, *_args: object) -> None:
        row, self._next_row = self._next_row, None
        if self.model.rowCount() == 0:
            self._show(None)
        elif row is not None:
            # Chosen here, not left to the view; _show starts the pause before answering.
            self.select_row(min(row, self.model.rowCount() - 1))
            self._show(self.current())
        self._update_buttons()  # the answer awaited may have been the one removed

    def _on_model_rows_inserted(self, *_args: object) -> None:
        if not self.table.currentIndex().isValid():
            self.select_row(0)  # shown at once, answerable once it settled

    def _on_model_reset(self) -> None:
        if self._awaiting is not None and self.model.row_of(self._awaiting) < 0:
            self._awaiting = None
        if not reselect(self.table, self._id_at, self._current_id):
            self._show(None)
        self._update_buttons()

    def _id_at(self, row: int) -> str | None:
        approval = self.model.approval_at(row)
        return approval.id if approval else None

    def _on_selection_current_row_changed(self, current: QModelIndex, _previous: QModelIndex
                                          ) -> None:
        self._show(self.model.approval_at(current.row()) if current.isValid() else None)

    def _on_commands_answer_not_taken(self, approval_id: str) -> None:
        self._sent.discard(approval_id)
        if self._awaiting == approval_id:
            self._awaiting = None
        self._update_buttons()

    def _show(self, approval: Approval | None) -> None:
        if approval is not None and approval.id == self._current_id:
            return
        self._current_id = approval.id if approval else None
        if approval is None:
            self._settle.stop()
        else:
            self._settle.start()  # a click meant for the request shown before must not land
        self._update_buttons()
        if approval is None:
            self.detail_stack.setCurrentIndex(0)
            return
        self.detail_stack.setCurrentIndex(1)
        self.feedback.clear()
        self.heading.setText(f"{approval.tool}  {approval.target_line}"
                             if approval.target else approval.tool)
        facts = {"Workspace": approval.workspace,
                 "Session": approval.session_label,
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
