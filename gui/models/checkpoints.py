"""One workspace's checkpoints as a table, newest first."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt

from intentd.gui.models.approvals import Index
from intentd.gui.state.records import Checkpoint, local_clock
from intentd.gui.state.workspaces import WorkspaceRegistry

HEADERS = ("Time", "Label", "Kind", "Files")


class CheckpointsModel(QAbstractTableModel):
    def __init__(self, registry: WorkspaceRegistry, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._registry = registry
        self._path: str | None = None
        self._rows: list[Checkpoint] = []
        registry.checkpoints_changed.connect(self._on_registry_checkpoints_changed)

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
        checkpoint = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            values = (local_clock(checkpoint.created_at), checkpoint.label, checkpoint.kind,
                      ", ".join(checkpoint.files))
            return values[index.column()] if 0 <= index.column() < len(values) else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{checkpoint.id}\n" + "\n".join(checkpoint.files)
        return None

    def checkpoint_at(self, row: int) -> Checkpoint | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def _on_registry_checkpoints_changed(self, path: str) -> None:
        if path == self._path:
            self._reload()

    def _reload(self) -> None:
        workspace = self._registry.get(self._path) if self._path else None
        self.beginResetModel()
        self._rows = list(workspace.checkpoints) if workspace else []
        self.endResetModel()
