"""The approval queue as a table, newest first."""

from __future__ import annotations

import bisect
import os
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt

from intentd.gui.state.approvals import PendingApprovals
from intentd.gui.state.records import Approval, local_clock, workspace_name

from .table import RowTableModel

PREVIEW_LINES, PREVIEW_TIP_LINES = 3, 20
NEWLINE_MARK = "  ⏎  "


def shown_target(approval: Approval) -> str:
    """The target as a person reads it: a path relative to its workspace, whichever agent sent it
    (Claude Code sends absolute paths), else the first line of the command."""
    target: str = approval.target_line
    path = approval.args.get("path")
    if isinstance(path, str) and os.path.isabs(path) and approval.workspace:
        inside = os.path.relpath(path, approval.workspace)
        if not inside.startswith(".."):
            return inside
    return target


def preview(approval: Approval, lines: int = PREVIEW_LINES, join: str = NEWLINE_MARK) -> str:
    """The command itself, or the first lines an edit changes (from its diff)."""
    command = approval.args.get("command")
    if isinstance(command, str):
        return join.join(line.strip() for line in command.splitlines()[:lines] if line.strip())
    if approval.diff:
        changed = [line for line in approval.diff.splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        return join.join(changed[:lines])
    content = approval.args.get("content")
    if isinstance(content, str):
        return join.join(content.splitlines()[:lines])
    return ""


def _newest_first(approval: Approval) -> float:
    created: float = approval.created_at
    return -created


class ApprovalsModel(RowTableModel[Approval]):
    """Mirrors an PendingApprovals: one row per pending approval."""

    HEADERS = ("Time", "Tool", "Target", "Preview", "Workspace", "Session", "Intent", "Reason")
    WIDTHS = (70, 120, 240, 320, 100, 110, 70)  # the target and the preview get the room

    def __init__(self, queue: PendingApprovals, parent: QObject | None = None) -> None:
        super().__init__(sorted(queue.approvals(), key=_newest_first), parent)
        self._queue = queue
        queue.approval_added.connect(self._on_queue_approval_added)
        queue.approval_removed.connect(self._on_queue_approval_removed)
        queue.approvals_reset.connect(self._on_queue_approvals_reset)

    def _cell(self, approval: Approval, column: int) -> str:
        values = (local_clock(approval.created_at), approval.tool, shown_target(approval),
                  preview(approval), workspace_name(approval.workspace), approval.session_id,
                  approval.intent_id or "—", approval.reason)
        return self._pick(values, column)

    def _role_data(self, approval: Approval, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            tips = (approval.reason, approval.reason, approval.target,
                    preview(approval, PREVIEW_TIP_LINES, "\n"), approval.workspace,
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
