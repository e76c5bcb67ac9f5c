"""One workspace's intents as a table: id, name, status, who selected it, scope."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QGuiApplication, QPalette

from intentd.gui.state.records import Intent
from intentd.gui.state.workspaces import Workspace, WorkspaceRegistry

from .table import WorkspaceTableModel


class IntentsModel(WorkspaceTableModel[Intent]):
    """Shows the intents of the workspace chosen with set_workspace()."""

    HEADERS = ("ID", "Name", "Status", "Selected by", "Owned scope")

    def __init__(self, registry: WorkspaceRegistry, parent: QObject | None = None) -> None:
        super().__init__(registry, parent)
        self._selected: dict[str, list[str]] = {}
        registry.intents_changed.connect(self._on_registry_intents_changed)

    def _cell(self, intent: Intent, column: int) -> str:
        values = (intent.id, intent.name, intent.status,
                  ", ".join(self._selected.get(intent.id, [])), ", ".join(intent.owned_scope))
        return self._pick(values, column)

    def _role_data(self, intent: Intent, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            return intent.name if intent.selectable else f"{intent.status}: not selectable"
        if role == Qt.ItemDataRole.ForegroundRole and not intent.selectable:
            return QGuiApplication.palette().color(QPalette.ColorGroup.Disabled,
                                                   QPalette.ColorRole.Text)
        return None

    def intent_at(self, row: int) -> Intent | None:
        return self._row_at(row)

    def sessions_of(self, intent_id: str) -> list[str]:
        return list(self._selected.get(intent_id, []))

    def _on_registry_intents_changed(self, path: str) -> None:
        self._reload_if_shown(path)

    def _load(self, workspace: Workspace | None) -> None:
        self._rows = list(workspace.intents) if workspace else []
        self._selected = {}
        if workspace:
            for session, intent_id in sorted(workspace.selected.items()):
                self._selected.setdefault(intent_id, []).append(session)
