"""The ledger as a live list: entries loaded with ledger/query, then tools/finished as they come,
and older pages loaded when the person asks for them."""

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
    older_requested = Signal(str, str)  # workspace, cursor: load the page before that cursor
    paging_changed = Signal()  # whether older entries can be loaded has changed

    def __init__(self, parent: QObject | None = None, limit: int = MAX_ENTRIES) -> None:
        super().__init__(parent)
        self.limit = limit
        self._entries: list[LedgerEntry] = []
        self._ids: set[tuple[str, str]] = set()
        self._older: dict[str, str] = {}  # workspace -> cursor of its next older page

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[LedgerEntry]:
        return list(self._entries)

    def merge(self, entries: Iterable[LedgerEntry], *, older: bool = False) -> None:
        """Add a batch (one workspace's ledger/query), keeping the whole list in time order.
        `older`: a page the person asked for; the list grows to hold it."""
        fresh = [e for e in entries if not (e.call_id and _key(e) in self._ids)]
        if not fresh:
            return
        if older:
            self.limit = max(self.limit, len(self._entries) + len(fresh))
        merged = sorted(self._entries + fresh, key=lambda e: e.time)[-self.limit:]
        self._entries = merged
        self._ids = {_key(e) for e in merged if e.call_id}
        self.entries_reset.emit()

    def add(self, entry: LedgerEntry) -> None:
        if entry.call_id and _key(entry) in self._ids:
            return
        if len(self._entries) >= self.limit:
            dropped = self._entries[: len(self._entries) - self.limit + 1]
            del self._entries[: len(dropped)]
            self._ids.difference_update(_key(e) for e in dropped)
            self.entries_dropped.emit(len(dropped))
        self._entries.append(entry)
        if entry.call_id:
            self._ids.add(_key(entry))
        self.entry_added.emit(entry)

    # -- paging ----------------------------------------------------------------------------

    def set_older(self, workspace: str, cursor: str | None) -> None:
        """Where the page before the oldest loaded entry of `workspace` starts (None: none)."""
        if cursor:
            self._older[workspace] = cursor
        else:
            self._older.pop(workspace, None)
        self.paging_changed.emit()

    def has_older(self, workspace: str = "") -> bool:
        """True when older entries can be loaded (of `workspace`, or of any workspace)."""
        return workspace in self._older if workspace else bool(self._older)

    def request_older(self, workspace: str = "") -> None:
        """Ask for the page before the oldest loaded entries (of `workspace`, or of each
        workspace). A cursor is used once: the answer brings the next one."""
        for path in [workspace] if workspace else list(self._older):
            cursor = self._older.pop(path, None)
            if cursor:
                self.older_requested.emit(path, cursor)
        self.paging_changed.emit()


def _key(entry: LedgerEntry) -> tuple[str, str]:
    # Call ids start again when the daemon restarts; with the time they name one call.
    return entry.call_id, entry.time
