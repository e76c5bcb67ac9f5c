"""The approval queue as a table, newest first."""

from __future__ import annotations

import bisect
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from intentd.gui.state.approvals import ApprovalQueue
from intentd.gui.state.records import Approval, local_clock, workspace_name

Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Time", "Tool", "Target", "Workspace", "Session", "Intent", "Reason")
APPROVAL_ROLE = Qt.ItemDataRole.UserRole + 1


def _newest_first(approval: Approval) -> float:
    created: float = approval.created_at
    return -created


class ApprovalsModel(QAbstractTableModel):
    """Mirrors an ApprovalQueue: one row per pending approval."""

    def __init__(self, queue: ApprovalQueue, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue = queue
        self._rows: list[Approval] = sorted(queue.approvals(), key=_newest_first)
        queue.approval_added.connect(self._on_queue_approval_added)
        queue.approval_removed.connect(self._on_queue_approval_removed)
        queue.approvals_reset.connect(self._on_queue_approvals_reset)

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
        approval = self._rows[index.row()]
        if role == APPROVAL_ROLE:
            return approval
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(approval, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(approval, index.column())
        return None

    @staticmethod
    def _cell(approval: Approval, column: int) -> str:
        target = approval.target.splitlines()[0] if approval.target else ""
        values = (local_clock(approval.created_at), approval.tool, target,
                  workspace_name(approval.workspace), approval.session_id,
                  approval.intent_id or "—", approval.reason)
        return values[column] if 0 <= column < len(values) else ""

    @staticmethod
    def _tooltip(approval: Approval, column: int) -> str:
        tips: tuple[str, ...] = (approval.reason, approval.reason, approval.target,
                                 approval.workspace,
                                 f"{approval.session_id} ({approval.agent or 'unknown agent'})")
        return tips[column] if 0 <= column < len(tips) else approval.reason

    def approval_at(self, row: int) -> Approval | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, approval_id: str) -> int:
        for row, approval in enumerate(self._rows):
            if approval.id == approval_id:
                return row
        return -1

    def _on_queue_approval_added(self, approval: Approval) -> None:
        row = bisect.bisect_left(self._rows, _newest_first(approval), key=_newest_first)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.insert(row, approval)
        self.endInsertRows()

    def _on_queue_approval_removed(self, approval_id: str, _resolution: str) -> None:
        row = self.row_of(approval_id)
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._rows[row]
            self.endRemoveRows()

    def _on_queue_approvals_reset(self) -> None:
        self.beginResetModel()
        self._rows = sorted(self._queue.approvals(), key=_newest_first)
        self.endResetModel()
