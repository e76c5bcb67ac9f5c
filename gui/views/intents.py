"""One workspace's intents: the table, the selected intent in full, the broken-file banner, and
the person's edits (new, start / complete / abandon, scope, remove), made through the daemon."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection
from intentd.gui.intents_edit import IntentsEditor
from intentd.gui.models.intents import IntentsModel
from intentd.gui.state.records import Intent, workspace_name
from intentd.gui.state.workspaces import WorkspaceRegistry
from intentd.gui.views.banner import Banner
from intentd.gui.views.intent_dialog import NewIntentDialog
from intentd.gui.views.scope_editor import ScopeEditorDialog
from intentd.gui.views.scope_offer import ScopeOffer
from intentd.gui.views.tables import make_table, reselect


class IntentsPane(QWidget):
    """Live: intents/changed and intents/error arrive through the registry within a second."""

    def __init__(self, registry: WorkspaceRegistry, parent: QWidget | None = None,
                 open_url: Callable[[QUrl], object] = QDesktopServices.openUrl,
                 connection: DaemonConnection | None = None) -> None:
        super().__init__(parent)
        self.registry = registry
        self.editor = IntentsEditor(connection, self) if connection is not None else None
        self.dialog: ScopeEditorDialog | NewIntentDialog | QMessageBox | None = None
        self.open_url = open_url  # swapped in tests, so no editor starts
        self._shown: str | None = None
        self.model = IntentsModel(registry, self)
        self.banner = Banner("Open in &editor", self)
        self.banner.action_clicked.connect(self.open_intents_file)
        self.title = QLabel(self)
        self.warnings = QLabel(self)
        self.warnings.setWordWrap(True)
        self.open_button = QPushButton("Open intents file   Ctrl+E", self)
        self.open_button.clicked.connect(self.open_intents_file)
        self.table = make_table(self, "Intents", self.model, (90, 260, 110, 200))
        self.detail = QTextBrowser(self)
        self.detail.setAccessibleName("Intent details")
        self.table.selectionModel().currentRowChanged.connect(
            self._on_selection_current_row_changed)
        self.model.modelReset.connect(self._on_model_reset)
        registry.intents_error_changed.connect(self._on_registry_intents_error_changed)
        registry.intents_changed.connect(self._on_registry_intents_changed)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        self.edit_buttons = self._edit_buttons(top)
        top.addWidget(self.open_button)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([300, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.banner)
        layout.addLayout(top)
        layout.addWidget(self.warnings)
        layout.addWidget(split, 1)
        self.setFocusProxy(self.table)
        self.set_workspace(None)

    def set_workspace(self, path: str | None) -> None:
        self.model.set_workspace(path)
        self.open_button.setEnabled(path is not None)
        self._refresh_edit_buttons()
        self.title.setText(f"Intents of {workspace_name(path)}" if path else "No workspace")
        self.title.setToolTip(path or "")
        self._refresh_banner()
        self._refresh_warnings()

    def open_intents_file(self) -> None:
        workspace = self.registry.get(self.model.workspace)
        if workspace is not None:
            self.open_url(QUrl.fromLocalFile(workspace.intents_file))

    def _on_registry_intents_error_changed(self, path: str) -> None:
        if path == self.model.workspace:
            self._refresh_banner()

    def _on_registry_intents_changed(self, path: str) -> None:
        if path == self.model.workspace:
            self._refresh_warnings()

    def _refresh_banner(self) -> None:
        workspace = self.registry.get(self.model.workspace)
        if workspace is None or workspace.error is None:
            self.banner.hide()
            return
        self.banner.show_message(f"<b>The intents file is broken</b> — the last good intents "
                                 f"stay listed until it is fixed.<br>"
                                 f"<code>{html.escape(str(workspace.error))}</code>")

    def _refresh_warnings(self) -> None:
        workspace = self.registry.get(self.model.workspace)
        warnings = workspace.warnings if workspace else []
        self.warnings.setText("\n".join(f"⚠ {w}" for w in warnings))
        self.warnings.setVisible(bool(warnings))

    def _on_model_reset(self) -> None:
        self._refresh_edit_buttons()  # a status changed by a live reload
        # Keep the intent the person was reading selected across live reloads.
        if not reselect(self.table, self._id_at, self._shown):
            self.detail.clear()

    def _id_at(self, row: int) -> str | None:
        intent = self.model.intent_at(row)
        return intent.id if intent else None

    def _on_selection_current_row_changed(self, current: QModelIndex, _previous: QModelIndex
                                          ) -> None:
        intent = self.model.intent_at(current.row()) if current.isValid() else None
        self._shown = intent.id if intent else None
        self._refresh_edit_buttons()
        self.detail.setHtml(self._describe(intent) if intent else "")

    def _describe(self, intent: Intent) -> str:
        def items(values: tuple[str, ...] | list[str]) -> str:
            if not values:
                return "<p><i>none</i></p>"
            return "<ul>" + "".join(f"<li>{html.escape(v)}</li>" for v in values) + "</ul>"

        selectable = "selectable" if intent.selectable else "not selectable"
        sessions = self.model.sessions_of(intent.id)
        return (f"<h3>{html.escape(intent.id)} — {html.escape(intent.name)}</h3>"
                f"<p>Status: <b>{html.escape(intent.status)}</b> ({selectable})</p>"
                f"<p>Selected by: {html.escape(', '.join(sessions)) or '<i>no session</i>'}</p>"
                f"<h4>Owned scope</h4>{items(intent.owned_scope)}"
                f"<h4>Constraints</h4>{items(intent.constraints)}"
                f"<h4>Acceptance criteria</h4>{items(intent.acceptance_criteria)}")

    # -- the person's edits --------------------------------------------------------------------
    def _edit_buttons(self, row: QHBoxLayout) -> dict[str, QPushButton]:
        buttons: dict[str, QPushButton] = {}
        for key, label, slot in (
                ("new", "&New intent…", self.new_intent),
                ("start", "S&tart", lambda: self.set_status("IN_PROGRESS")),
                ("complete", "Co&mplete", lambda: self.set_status("COMPLETED")),
                ("abandon", "A&bandon", lambda: self.set_status("ABANDONED")),
                ("scope", "Edit &scope…", self.edit_scope),
                ("remove", "&Remove…", self.ask_to_remove)):
            button = QPushButton(label, self)
            button.clicked.connect(slot)
            row.addWidget(button)
            buttons[key] = button
        return buttons

    def _refresh_edit_buttons(self) -> None:
        can_edit = self.editor is not None and self.model.workspace is not None
        intent = self.current_intent()
        self.edit_buttons["new"].setEnabled(can_edit)
        for key, status in (("start", "IN_PROGRESS"), ("complete", "COMPLETED"),
                            ("abandon", "ABANDONED")):
            self.edit_buttons[key].setEnabled(can_edit and intent is not None
                                              and intent.status != status)
        for key in ("scope", "remove"):
            self.edit_buttons[key].setEnabled(can_edit and intent is not None)

    def current_intent(self) -> Intent | None:
        index = self.table.currentIndex()
        return self.model.intent_at(index.row()) if index.isValid() else None

    def _open(self, dialog: ScopeEditorDialog | NewIntentDialog | QMessageBox) -> None:
        if self.dialog is not None:
            self.dialog.close()  # one edit at a time; its `finished` forgets it
        self.dialog = dialog
        dialog.finished.connect(lambda _result: self._on_dialog_finished(dialog))
        dialog.open()

    def _on_dialog_finished(self, dialog: ScopeEditorDialog | NewIntentDialog | QMessageBox
                            ) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()

    def new_intent(self) -> None:
        if self.editor is not None and self.model.workspace is not None:
            self._open(NewIntentDialog(self.editor, self.model.workspace, self))

    def set_status(self, status: str) -> None:
        intent = self.current_intent()
        if self.editor is not None and self.model.workspace is not None and intent is not None:
            self.editor.edit_now(protocol.INTENTS_UPDATE_STATUS, self.model.workspace,
                                 {"intent_id": intent.id, "status": status})

    def edit_scope(self) -> None:
        intent = self.current_intent()
        if self.editor is not None and self.model.workspace is not None and intent is not None:
            self._open(ScopeEditorDialog(self.editor, self.model.workspace, intent.id,
                                         parent=self))

    def offer_scope(self, offer: ScopeOffer) -> None:
        """From a refusal at `scope` or an approval: the path, or its folder, with the preview."""
        if self.editor is not None:
            self._open(ScopeEditorDialog(self.editor, offer.workspace, offer.intent_id,
                                         offer.path, self))

    def ask_to_remove(self) -> None:
        intent = self.current_intent()
        workspace = self.model.workspace
        if self.editor is None or workspace is None or intent is None:
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Remove intent",
                          f"Remove {intent.id} ({intent.name}) from the intents file? Sessions "
                          "that selected it can no longer write.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.button(QMessageBox.StandardButton.Yes).setText("&Remove")
        editor, intent_id = self.editor, intent.id
        box.accepted.connect(lambda: editor.edit_now(protocol.INTENTS_REMOVE, workspace,
                                                     {"intent_id": intent_id}))
        self._open(box)
