"""The approval queue as a table, newest first."""

from __future__ import annotations

import bisect
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt

from intentd.gui.state.approvals import ApprovalQueue
from intentd.gui.state.records import Approval, local_clock, workspace_name

from .table import RowTableModel


def _newest_first(approval: Approval) -> float:
    created: float = approval.created_at
    return -created


class ApprovalsModel(RowTableModel[Approval]):
    """Mirrors an ApprovalQueue: one row per pending approval."""

    HEADERS = ("Time", "Tool", "Target", "Workspace", "Session", "Intent", "Reason")

    def __init__(self, queue: ApprovalQueue, parent: QObject | None = None) -> None:
        super().__init__(sorted(queue.approvals(), key=_newest_first), parent)
        self._queue = queue
        queue.approval_added.connect(self._on_queue_approval_added)
        queue.approval_removed.connect(self._on_queue_approval_removed)
        queue.approvals_reset.connect(self._on_queue_approvals_reset)

    def _cell(self, approval: Approval, column: int) -> str:
        values = (local_clock(approval.created_at), approval.tool, approval.target_line,
                  workspace_name(approval.workspace), approval.session_id,
                  approval.intent_id or "—", approval.reason)
        return self._pick(values, column)

    def _role_data(self, approval: Approval, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            tips = (approval.reason, approval.reason, approval.target, approval.workspace,
                    approval.session_label)
            return self._pick(tips, column, approval.reason)
        return None

    def approval_at(self, row: int) -> Approval | None:
        return self._row_at(row)

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
        self._replace_rows(sorted(self._queue.approvals(), key=_newest_first))
