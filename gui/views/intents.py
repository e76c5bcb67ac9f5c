"""One workspace's intents: the table, the selected intent in full, and the broken-file banner."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.models.intents import IntentsModel
from intentd.gui.state.records import Intent, workspace_name
from intentd.gui.state.workspaces import WorkspaceRegistry
from intentd.gui.views.banner import Banner
from intentd.gui.views.tables import make_table, reselect


class IntentsPane(QWidget):
    """Live: intents/changed and intents/error arrive through the registry within a second."""

    def __init__(self, registry: WorkspaceRegistry, parent: QWidget | None = None,
                 open_url: Callable[[QUrl], object] = QDesktopServices.openUrl) -> None:
        super().__init__(parent)
        self.registry = registry
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
