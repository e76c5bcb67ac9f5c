"""The scope editor: an intent's owned_scope as text, with a live preview of the files it owns now
and of what the change adds or removes; also the "add to this intent's scope" offer for a path."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QRadioButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from intentd.daemon import protocol
from intentd.gui.connection import RpcFailure
from intentd.gui.intents_edit import IntentsEditor, failure_text, scope_lines
from intentd.gui.views.scope_offer import scope_choices

DEBOUNCE_MS = 80  # one preview per pause in typing, not one per keystroke
FRESH_SECONDS = 2.0  # when the editor opens, its files are at most this old


class ScopeEditorDialog(QDialog):
    """Saving writes the whole list (intents/scope_set), based on the file as it was read."""

    def __init__(self, editor: IntentsEditor, workspace: str, intent_id: str,
                 suggestion: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor, self.workspace, self.intent_id = editor, workspace, intent_id
        self.suggestion = suggestion  # a workspace path; its scope lines are the choices
        self.base_sha256: str | None = None
        self.current: list[str] = []
        self.last_preview: dict[str, Any] | None = None
        self._ticket = 0
        self.setWindowTitle(f"Scope of {intent_id}" if suggestion is None
                            else f"Add to the scope of {intent_id}")
        self.choices = QButtonGroup(self)
        self.text = QPlainTextEdit(self)
        self.text.setAccessibleName("Owned scope")
        self.text.setPlaceholderText("One glob a line, as in .gitignore: src/**, docs/*.md, "
                                     "!src/secrets/**")
        self.summary = QLabel("Reading the intents file…", self)
        self.summary.setWordWrap(True)
        self.matched = QListWidget(self)
        self.matched.setAccessibleName("Files the scope owns")
        self.changes = QListWidget(self)
        self.changes.setAccessibleName("Files the change adds or removes")
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setEnabled(False)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh_preview)
        self._build(suggestion)
        self.editor.read(workspace, self._on_read, self._on_failure)

    def _build(self, suggestion: str | None) -> None:
        layout = QVBoxLayout(self)
        if suggestion is not None:
            layout.addWidget(QLabel(f"Let {html.escape(self.intent_id)} write "
                                    f"<code>{html.escape(suggestion)}</code>:", self))
            for number, glob in enumerate(scope_choices(suggestion)):
                label = "exactly this path" if number == 0 else "everything in its folder"
                button = QRadioButton(f"{glob}   ({label})", self)
                button.setProperty("glob", glob)
                button.setChecked(number == 0)
                self.choices.addButton(button, number)
                layout.addWidget(button)
            self.choices.idToggled.connect(self._on_choices_id_toggled)
        layout.addWidget(QLabel("&Owned scope (one glob a line; a line starting with ! "
                                "excludes; the last matching line wins):", self))
        layout.itemAt(layout.count() - 1).widget().setBuddy(self.text)  # type: ignore[union-attr]
        layout.addWidget(self.text, 1)
        layout.addWidget(self.summary)
        split = QSplitter(self)
        split.addWidget(self.matched)
        split.addWidget(self.changes)
        layout.addWidget(split, 2)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self.resize(760, 560)

    # -- reading and previewing -------------------------------------------------------------
    def _on_read(self, snap: dict[str, Any]) -> None:
        intent = next((i for i in snap.get("intents") or [] if i.get("id") == self.intent_id),
                      None)
        if intent is None:
            self.message.setText(f"There is no intent {self.intent_id} in the file now.")
            return
        self.base_sha256 = str(snap["sha256"])
        self.current = [str(g) for g in intent.get("owned_scope") or []]
        lines = list(self.current)
        chosen = self.choices.checkedButton()
        if chosen is not None and chosen.property("glob") not in lines:
            lines.append(str(chosen.property("glob")))
        self.text.setPlainText("\n".join(lines))
        self.text.textChanged.connect(self._timer.start)
        self.save_button.setEnabled(True)
        self.refresh_preview()

    def _on_choices_id_toggled(self, _id: int, checked: bool) -> None:
        if not checked or self.base_sha256 is None:
            return
        offered = {str(b.property("glob")) for b in self.choices.buttons()}
        lines = [g for g in scope_lines(self.text.toPlainText()) if g not in offered
                 or g in self.current]
        button = self.choices.checkedButton()
        chosen = str(button.property("glob")) if button is not None else ""
        self.text.setPlainText("\n".join(lines + ([chosen] if chosen not in lines else [])))

    def refresh_preview(self) -> None:
        self._timer.stop()
        self._ticket += 1
        ticket = self._ticket
        # The first preview lists the files afresh; keystrokes reuse that listing.
        self.editor.preview(self.workspace, scope_lines(self.text.toPlainText()), None,
                            lambda answer: self._on_preview(ticket, answer),
                            base_scope=self.current,
                            max_age=FRESH_SECONDS if self.last_preview is None else None,
                            paths=[self.suggestion] if self.suggestion else None)

    def _on_preview(self, ticket: int, answer: dict[str, Any]) -> None:
        if ticket != self._ticket:
            return  # an older preview: the text has changed since it was asked for
        self.last_preview = answer
        count, added, removed = answer["count"], answer["added_count"], answer["removed_count"]
        more = " (of the first files only)" if answer.get("listing_truncated") else ""
        summary = (f"{count} of {answer['total_files']} files match now{more}; this change adds "
                   f"{added} and removes {removed}.")
        owned = (answer.get("owns") or {}).get(self.suggestion)
        if isinstance(owned, dict):
            summary += (f" {self.suggestion} was in the scope already." if owned.get("before")
                        else f" {self.suggestion} is in the scope: the agent's next try passes "
                        "this check." if owned.get("after")
                        else f" {self.suggestion} is still outside the scope.")
        problems = answer.get("problems") or []
        if problems:
            summary += " " + "; ".join(f"line {p['line']} ({p['glob']}): {p['message']}"
                                       for p in problems)
        self.summary.setText(summary)
        self._fill(self.matched, answer["files"], count)
        self._fill(self.changes, [f"+ {p}" for p in answer["added"]]
                   + [f"− {p}" for p in answer["removed"]], added + removed)

    @staticmethod
    def _fill(widget: QListWidget, items: list[str], total: int) -> None:
        widget.setUpdatesEnabled(False)
        widget.clear()
        widget.addItems(items)
        if total > len(items):
            widget.addItem(f"… and {total - len(items)} more")
        widget.setUpdatesEnabled(True)

    # -- saving -----------------------------------------------------------------------------
    def save(self) -> None:
        if self.base_sha256 is None:
            return
        self.save_button.setEnabled(False)
        self.editor.edit(protocol.INTENTS_SCOPE_SET, self.workspace, self.base_sha256,
                         {"intent_id": self.intent_id,
                          "owned_scope": scope_lines(self.text.toPlainText())},
                         lambda _answer: self.accept(), self._on_failure)

    def _on_failure(self, failure: RpcFailure) -> None:
        self.message.setText(failure_text(failure))
        if failure.code == protocol.INTENTS_CONFLICT:
            # Keep the person's text; the next save is based on the file as it is now.
            self.editor.read(self.workspace, self._on_reread, None)
        else:
            self.save_button.setEnabled(self.base_sha256 is not None)

    def _on_reread(self, snap: dict[str, Any]) -> None:
        intent = next((i for i in snap.get("intents") or [] if i.get("id") == self.intent_id),
                      None)
        self.base_sha256 = str(snap["sha256"]) if intent is not None else None
        if intent is not None:
            self.current = [str(g) for g in intent.get("owned_scope") or []]
            self.message.setText(self.message.text() + " Its scope on disk is now: "
                                 + (", ".join(self.current) or "empty")
                                 + ". Save again to replace it with the list above.")
            self.save_button.setEnabled(True)
            self.refresh_preview()
