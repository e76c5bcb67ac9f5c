"""What the record-per-row table models share: counts, headers, the row lookup and resets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from intentd.gui.state.workspaces import Workspace, WorkspaceRegistry

# The models import this module relatively (`from .table import`): mypy cannot follow the editable
# install's import hook, so `intentd.gui...` is Any to it, and a class may not subclass Any.
Index = QModelIndex | QPersistentModelIndex
Row = TypeVar("Row")


class RowTableModel(QAbstractTableModel, Generic[Row]):
    """One record per row in self._rows, one column per HEADERS entry; subclasses fill the cells."""

    HEADERS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, rows: list[Row], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows = rows

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(self.HEADERS)):
            return self.HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(row, index.column())
        return self._role_data(row, index.column(), role)

    def _cell(self, row: Row, column: int) -> str:
        raise NotImplementedError

    def _role_data(self, row: Row, column: int, role: int) -> Any:
        """Tooltips, colours and the like; the display text comes from _cell."""
        return None

    @staticmethod
    def _pick(values: Sequence[str], column: int, default: str = "") -> str:
        return values[column] if 0 <= column < len(values) else default

    def _row_at(self, row: int) -> Row | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def _replace_rows(self, rows: list[Row]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()


class WorkspaceTableModel(RowTableModel[Row]):
    """Rows from the one workspace chosen with set_workspace(), reloaded when its records change."""

    def __init__(self, registry: WorkspaceRegistry, parent: QObject | None = None) -> None:
        super().__init__([], parent)
        self._registry = registry
        self._path: str | None = None

    @property
    def workspace(self) -> str | None:
        return self._path

    def set_workspace(self, path: str | None) -> None:
        self._path = path
        self._reload()

    def _reload_if_shown(self, path: str) -> None:
        # Another workspace's change leaves this one's rows (and the view's selection) alone.
        if path == self._path:
            self._reload()

    def _reload(self) -> None:
        workspace = self._registry.get(self._path)
        self.beginResetModel()
        self._load(workspace)
        self.endResetModel()

    def _load(self, workspace: Workspace | None) -> None:
        """Sets self._rows (and what goes with them) from the workspace, inside the reset."""
        raise NotImplementedError
