"""The workspaces as a list: names told apart from namesakes, pending counts, broken-config marks."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QStyle

from intentd.daemon import protocol
from intentd.gui.state.approvals import PendingApprovals
from intentd.gui.state.workspaces import WorkspaceRegistry

from .table import Index


class WorkspacesModel(QAbstractListModel):
    def __init__(self, registry: WorkspaceRegistry, approvals: PendingApprovals,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._registry = registry
        self._approvals = approvals
        self._paths: list[str] = registry.paths()
        self._labels = protocol.workspace_labels(self._paths)  # namesakes told apart by parent
        registry.workspace_added.connect(self._on_registry_workspace_added)
        registry.workspace_changed.connect(self._on_registry_workspace_changed)
        registry.workspace_removed.connect(self._on_registry_workspace_removed)
        registry.intents_error_changed.connect(self._on_registry_workspace_changed)
        # Pending counts are refreshed once per pass of the event loop, not once per request.
        self._counts = QTimer(self, singleShot=True, interval=0)
        self._counts.timeout.connect(self._on_counts_timeout)
        approvals.approval_added.connect(self._counts.start)
        approvals.approval_removed.connect(self._counts.start)
        approvals.approvals_reset.connect(self._counts.start)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._paths)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._paths):
            return None
        path = self._paths[index.row()]
        workspace = self._registry.get(path)
        broken = workspace is not None and (workspace.error or workspace.config_errors)
        if role == Qt.ItemDataRole.DisplayRole:
            pending = self._approvals.pending_in(path)
            return self._labels[path] + (f"  ({pending} pending)" if pending else "")
        if role == Qt.ItemDataRole.ToolTipRole:
            return path + (f"\n{workspace.error}" if workspace and workspace.error else "")
        if role == Qt.ItemDataRole.DecorationRole and broken:
            return QApplication.style().standardIcon(
                QStyle.StandardPixmap.SP_MessageBoxWarning)
        return None

    def path_at(self, row: int) -> str | None:
        return self._paths[row] if 0 <= row < len(self._paths) else None

    def row_of(self, path: str) -> int:
        return self._paths.index(path) if path in self._paths else -1

    def _on_registry_workspace_added(self, path: str) -> None:
        row = len(self._paths)
        self.beginInsertRows(QModelIndex(), row, row)
        self._paths.append(path)
        self._labels = protocol.workspace_labels(self._paths)
        self.endInsertRows()
        if row:  # a namesake's label may have grown a parent folder
            self.dataChanged.emit(self.index(0), self.index(row - 1))

    def _on_registry_workspace_removed(self, path: str) -> None:
        row = self.row_of(path)
        if row < 0:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._paths[row]
        self._labels = protocol.workspace_labels(self._paths)
        self.endRemoveRows()
        if self._paths:  # a namesake gone: the other's label may shrink back to its name
            self.dataChanged.emit(self.index(0), self.index(len(self._paths) - 1))

    def _on_registry_workspace_changed(self, path: str) -> None:
        row = self.row_of(path)
        if row >= 0:
            self.dataChanged.emit(self.index(row), self.index(row))

    def _on_counts_timeout(self) -> None:
        if self._paths:
            self.dataChanged.emit(self.index(0), self.index(len(self._paths) - 1))
