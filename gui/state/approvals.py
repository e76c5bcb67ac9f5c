"""The approval queue as the app knows it: every pending call from every workspace."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal

from intentd.gui.state.records import Approval


class PendingApprovals(QObject):
    """Pending approvals by id; the daemon's notifications add and remove them."""

    approval_added = Signal(object)  # Approval
    approval_removed = Signal(str, str)  # approval id, resolution
    approvals_reset = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._items: dict[str, Approval] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, approval_id: object) -> bool:
        return approval_id in self._items

    def approvals(self) -> list[Approval]:
        return list(self._items.values())

    def pending_in(self, workspace: str) -> int:
        return sum(1 for a in self._items.values() if a.workspace == workspace)

    def replace(self, approvals: Iterable[Approval]) -> None:
        """Start over from a full list (approvals/list after a (re)connect)."""
        self._items = {a.id: a for a in approvals}
        self.approvals_reset.emit()

    def add(self, approval: Approval) -> None:
        if approval.id in self._items:
            return
        self._items[approval.id] = approval
        self.approval_added.emit(approval)

    def remove(self, approval_id: str, resolution: str) -> None:
        if self._items.pop(approval_id, None) is not None:
            self.approval_removed.emit(approval_id, resolution)

    def clear(self) -> None:
        if self._items:
            self._items = {}
            self.approvals_reset.emit()
