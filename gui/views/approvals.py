"""The approval queue: the pending calls, the one selected in detail, approve and reject."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.answers import AnswerCommands
from intentd.gui.commands import DaemonCommands
from intentd.gui.diff.view import DiffPane
from intentd.gui.models.approvals import ApprovalsModel, shown_target
from intentd.gui.state.grants import grants_state
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
        self.table = make_table(self, "Pending approvals", model, model.WIDTHS)
        # several rows may be chosen and answered together (Approve selected, Reject selected)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.answers = AnswerCommands(commands.connection, commands.approvals, self)
        self.answers.answered.connect(self._on_answers_answered)
        self.answers.not_taken.connect(self._on_answers_not_taken)
        self.grants = grants_state(commands.connection)
        self.approvers = QLabel(self)
        self.approvers.setWordWrap(True)
        self.grants.approvers_changed.connect(self._on_grants_approvers_changed)
        self._on_grants_approvers_changed(self.grants.approvers)
        self.approve_selected = QPushButton("Approve selected", self)
        self.reject_selected = QPushButton("Reject selected", self)
        self.approve_turn = QPushButton("Approve the rest of this turn", self)
        self.remember = QToolButton(self)
        self.remember.setText("Approve, and don't ask again ▾")
        self.remember.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.remember.setMenu(QMenu(self.remember))
        self.remember.menu().aboutToShow.connect(self._fill_remember_menu)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.approve_selected.clicked.connect(lambda: self._answer_selected(True))
        self.reject_selected.clicked.connect(lambda: self._answer_selected(False))
        self.approve_turn.clicked.connect(self._approve_rest_of_turn)
        self.heading = QLabel(self)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        font = self.heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.heading.setFont(font)
        self.facts = QFormLayout()
        self._fact_labels = {name: self._fact(name) for name in
                             ("Workspace", "Session", "Intent", "Why a person", "Turn")}
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
        selection.selectionChanged.connect(self._on_selection_selection_changed)
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
        more = QHBoxLayout()
        more.addWidget(self.note, 1)
        for button in (self.reject_selected, self.approve_selected, self.approve_turn,
                       self.remember):
            more.addWidget(button)
        column = QVBoxLayout(detail)
        column.setContentsMargins(0, 4, 0, 0)
        column.addWidget(self.heading)
        column.addLayout(self.facts)
        column.addWidget(self.body, 1)
        column.addLayout(answer)
        column.addLayout(more)
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
        layout.addWidget(self.approvers)
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
        several = answerable and len(self.selected_ids()) > 1
        self.approve_selected.setEnabled(several)
        self.reject_selected.setEnabled(several)
        current = self.current()
        self.approve_turn.setEnabled(answerable and current is not None
                                     and current.batch is not None)
        self.remember.setEnabled(answerable)

    # -- several at once, and grants -------------------------------------------------------------
    def selected_ids(self) -> list[str]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [a.id for a in map(self.model.approval_at, rows) if a and a.id not in self._sent]

    def _answer_selected(self, approve: bool) -> None:
        ids = self.selected_ids()
        if len(ids) > 1 and self.answerable():
            feedback = None if approve else (self.feedback.text().strip() or None)
            self._send_many(ids, lambda: self.answers.answer(ids, approve, feedback=feedback))

    def _approve_rest_of_turn(self) -> None:
        """The call shown and the rest of its turn that the table shows, by id. Not the daemon's
        `rest_of_turn`: that answers the turn as it stands when the answer arrives, with a call
        the agent queued a moment before the click, which the person never saw."""
        current = self.current()
        if current is not None and current.batch is not None and self.answerable():
            shown = map(self.model.approval_at, range(self.model.rowCount()))
            ids = [a.id for a in shown if a and a.id not in self._sent
                   and (a.session_id, a.batch) == (current.session_id, current.batch)]
            self._send_many(ids, lambda: self.answers.answer(ids, True))

    def approve_with_grant(self, grant: dict[str, Any]) -> None:
        """Approve the request shown, and remember the answer as `grant`."""
        if self._current_id is not None and self.answerable():
            ids = [self._current_id]
            self._send_many(ids, lambda: self.answers.answer(ids, True, grant=grant))

    def _send_many(self, ids: list[str], send: Callable[[], None]) -> None:
        self._sent.update(ids)
        self._awaiting = self._current_id
        self._update_buttons()
        send()

    def _on_answers_answered(self, ids: list[str], result: dict[str, Any]) -> None:
        grant = result.get("grant") or {}
        if "added" in grant:
            self.note.setText(f"Won't ask again: {grant['added'].get('description')} "
                              "(Settings lists it; revoke it there).")
        else:
            self.note.setText(f"Answered {len(ids)} requests." if len(ids) > 1 else "")

    def _on_answers_not_taken(self, ids: list[str], why: str) -> None:
        self._sent.difference_update(ids)
        if self._awaiting in ids:
            self._awaiting = None
        self.note.setText(f"Not answered: {why}")
        self._update_buttons()

    def _fill_remember_menu(self) -> None:
        menu = self.remember.menu()
        menu.clear()
        approval = self.current()
        for label, grant in remember_choices(approval) if approval else []:
            action = menu.addAction(label)
            action.triggered.connect(lambda _=False, g=grant: self.approve_with_grant(g))

    def _on_selection_selection_changed(self, *_args: object) -> None:
        self._update_buttons()

    def _on_grants_approvers_changed(self, count: int | None) -> None:
        if count is None:
            self.approvers.setText("Not connected to the daemon: an agent with its own prompt "
                                   "(Claude Code) asks you there meanwhile.")
        else:
            self.approvers.setText(f"Approvers connected: {count} (this app included). Calls "
                                   "that need you wait here; with no approver connected, an "
                                   "agent with its own prompt asks you there.")

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
        self.heading.setText(f"{approval.tool}  {shown_target(approval)}"
                             if approval.target else approval.tool)
        facts = {"Workspace": approval.workspace,
                 "Session": approval.session_label,
                 "Intent": approval.intent_id or "none selected",
                 "Why a person": f"{approval.reason} [{approval.stage}]",
                 # the agent turn "Approve the rest of this turn" answers, as the agent names it
                 "Turn": approval.batch or "— (the agent names no turn)"}
        for name, value in facts.items():
            self._fact_labels[name].setText(value)
        if approval.diff:
            self.diff.set_diff(approval.diff, str(approval.args.get("path") or ""),
                               str(approval.args.get("path") or ""))
            self.body.setCurrentWidget(self.diff)
        else:
            self.args.setPlainText(_describe_args(approval))
            self.body.setCurrentWidget(self.args)


def remember_choices(approval: Approval) -> list[tuple[str, dict[str, Any]]]:
    """The grants a person may make from this request: the daemon derives each from the call
    itself (a command's prefix from its analysis), so these only choose the shape and lifetime."""
    lifetimes = (("this session", "session"), ("this workspace, until revoked", "workspace"))
    if isinstance(approval.args.get("command"), str):
        return [(f"…for this command's program and sub-command, {text}",
                 {"shape": "command", "lifetime": lifetime}) for text, lifetime in lifetimes]
    if not isinstance(approval.args.get("path"), str):
        return []
    path = shown_target(approval)
    choices = [(f"…for {approval.tool} on {path}, {text}",
                {"shape": "path", "lifetime": lifetime, "pattern": path})
               for text, lifetime in lifetimes]
    folder = posixpath.dirname(path)
    if folder:
        choices.append((f"…for {approval.tool} on {folder}/**, this workspace, until revoked",
                        {"shape": "path", "lifetime": "workspace", "pattern": f"{folder}/**"}))
    return choices


def _describe_args(approval: Approval) -> str:
    command = approval.args.get("command")
    if isinstance(command, str):
        return f"$ {command}\n\n" + json.dumps(approval.args, indent=2, ensure_ascii=False)
    return json.dumps(approval.args, indent=2, ensure_ascii=False)
