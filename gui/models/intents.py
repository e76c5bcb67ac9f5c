"""One workspace's intents as a table: id, name, status, who selected it, scope."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QGuiApplication, QPalette

from intentd.gui.models.approvals import Index
from intentd.gui.state.records import Intent
from intentd.gui.state.workspaces import WorkspaceRegistry

HEADERS = ("ID", "Name", "Status", "Selected by", "Owned scope")


class IntentsModel(QAbstractTableModel):
    """Shows the intents of the workspace chosen with set_workspace()."""

    def __init__(self, registry: WorkspaceRegistry, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._registry = registry
        self._path: str | None = None
        self._rows: list[Intent] = []
        self._selected: dict[str, list[str]] = {}
        registry.intents_changed.connect(self._on_registry_intents_changed)
        registry.workspaces_reset.connect(self._reload)

    @property
    def workspace(self) -> str | None:
        return self._path

    def set_workspace(self, path: str | None) -> None:
        self._path = path
        self._reload()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(HEADERS)):
            return HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        intent = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(intent, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return intent.name if intent.selectable else f"{intent.status}: not selectable"
        if role == Qt.ItemDataRole.ForegroundRole and not intent.selectable:
            return QGuiApplication.palette().color(QPalette.ColorGroup.Disabled,
                                                   QPalette.ColorRole.Text)
        return None

    def _cell(self, intent: Intent, column: int) -> str:
        values = (intent.id, intent.name, intent.status,
                  ", ".join(self._selected.get(intent.id, [])), ", ".join(intent.owned_scope))
        return values[column] if 0 <= column < len(values) else ""

    def intent_at(self, row: int) -> Intent | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def sessions_of(self, intent_id: str) -> list[str]:
        return list(self._selected.get(intent_id, []))

    def _on_registry_intents_changed(self, path: str) -> None:
        if path == self._path:
            self._reload()

    def _reload(self) -> None:
        workspace = self._registry.get(self._path) if self._path else None
        self.beginResetModel()
        self._rows = list(workspace.intents) if workspace else []
        self._selected = {}
        if workspace:
            for session, intent_id in sorted(workspace.selected.items()):
                self._selected.setdefault(intent_id, []).append(session)
        self.endResetModel()
