"""The ledger as a live list: entries loaded with ledger/query, then tools/finished as they come."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal

from intentd.gui.state.records import LedgerEntry

MAX_ENTRIES = 5000  # older entries drop off; the ledger file on disk keeps them all


class ActivityLog(QObject):
    """Ledger entries of every workspace, oldest first."""

    entry_added = Signal(object)  # LedgerEntry
    entries_dropped = Signal(int)  # how many of the oldest entries were dropped
    entries_reset = Signal()

    def __init__(self, parent: QObject | None = None, limit: int = MAX_ENTRIES) -> None:
        super().__init__(parent)
        self.limit = limit
        self._entries: list[LedgerEntry] = []
        self._ids: set[str] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[LedgerEntry]:
        return list(self._entries)

    def merge(self, entries: Iterable[LedgerEntry]) -> None:
        """Add a batch (one workspace's ledger/query), keeping the whole list in time order."""
        fresh = [e for e in entries if not (e.call_id and e.call_id in self._ids)]
        if not fresh:
            return
        merged = sorted(self._entries + fresh, key=lambda e: e.time)[-self.limit:]
        self._entries = merged
        self._ids = {e.call_id for e in merged if e.call_id}
        self.entries_reset.emit()

    def add(self, entry: LedgerEntry) -> None:
        if entry.call_id and entry.call_id in self._ids:
            return
        if len(self._entries) >= self.limit:
            dropped = self._entries[: len(self._entries) - self.limit + 1]
            del self._entries[: len(dropped)]
            self._ids.difference_update(e.call_id for e in dropped)
            self.entries_dropped.emit(len(dropped))
        self._entries.append(entry)
        if entry.call_id:
            self._ids.add(entry.call_id)
        self.entry_added.emit(entry)
