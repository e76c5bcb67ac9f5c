"""The activity log as a table, and the filter in front of it (text, decision, workspace)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QSortFilterProxyModel, Qt

from intentd.gui.state.activity import ActivityLog
from intentd.gui.state.records import LedgerEntry, workspace_name
from intentd.gui.theme import colors

from .table import Index, RowTableModel


class ActivityModel(RowTableModel[LedgerEntry]):
    """Mirrors an ActivityLog, oldest first (the view scrolls to the newest)."""

    HEADERS = ("Time", "Workspace", "Session", "Tool", "Decision", "Stage", "Reason")

    def __init__(self, log: ActivityLog, parent: QObject | None = None) -> None:
        super().__init__(log.entries(), parent)
        self._log = log
        self.log = log
        log.entry_added.connect(self._on_log_entry_added)
        log.entries_dropped.connect(self._on_log_entries_dropped)
        log.entries_reset.connect(self._on_log_entries_reset)

    def _cell(self, entry: LedgerEntry, column: int) -> str:
        decision = entry.decision + (f" ({entry.approved_by})" if entry.approved_by else "")
        values = (entry.local_time, workspace_name(entry.workspace), entry.session, entry.tool,
                  decision, entry.stage, entry.reason + sandbox_words(entry)
                  + checkpoint_words(entry))
        return self._pick(values, column)

    def _role_data(self, entry: LedgerEntry, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            return (entry.workspace if column == 1
                    else entry.reason + sandbox_words(entry) + checkpoint_words(entry))
        if role == Qt.ItemDataRole.ForegroundRole and column == 4:
            palette = colors()
            return {"allow": palette.allow, "deny": palette.deny}.get(entry.decision, palette.ask)
        if role == Qt.ItemDataRole.ForegroundRole and column == 6 and sandbox_words(entry):
            return colors().deny
        return None

    def entry_at(self, row: int) -> LedgerEntry | None:
        return self._row_at(row)

    def _on_log_entry_added(self, entry: LedgerEntry) -> None:
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(entry)
        self.endInsertRows()

    def _on_log_entries_dropped(self, count: int) -> None:
        count = min(count, len(self._rows))
        if count > 0:
            self.beginRemoveRows(QModelIndex(), 0, count - 1)
            del self._rows[:count]
            self.endRemoveRows()

    def _on_log_entries_reset(self) -> None:
        self._replace_rows(self._log.entries())


def checkpoint_words(entry: LedgerEntry) -> str:
    """How the call's checkpoint found changes, when the file watcher alone did not (a scan)."""
    found = entry.checkpoint_coverage
    if not found:
        return ""
    if found.startswith("full scan: "):
        return f" — checkpoint by a full scan ({found.removeprefix('full scan: ')})"
    return f" — checkpoint by the {found}"


def sandbox_words(entry: LedgerEntry) -> str:
    """What the sandbox has to say about a command: unconfined, changes outside the scope, or an
    audit that could not run."""
    words = ""
    if entry.undone:
        words += " — undone, outside the scope: " + ", ".join(entry.undone)
    left = [p for p in entry.out_of_scope if p not in entry.undone]
    if left:
        words += " — outside the scope, left in place: " + ", ".join(left)
    if entry.audit_error:  # never silent: what it changed outside the scope was not checked
        words += (f" — scope audit FAILED ({entry.audit_error}): changes outside the scope may "
                  "remain")
    if entry.confined is False:
        words += " — ran UNCONFINED" + (f" ({entry.sandbox_note})" if entry.sandbox_note else "")
    return words


class ActivityFilter(QSortFilterProxyModel):
    """Keeps the rows that match the typed text, the chosen decision and workspace."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._decision = ""
        self._workspace = ""

    def set_text(self, text: str) -> None:
        self._change(lambda: setattr(self, "_text", text.strip().lower()))

    def set_decision(self, decision: str) -> None:
        self._change(lambda: setattr(self, "_decision", decision))

    def set_workspace(self, workspace: str) -> None:
        self._change(lambda: setattr(self, "_workspace", workspace))

    def _change(self, apply: Any) -> None:
        self.beginFilterChange()
        apply()
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        entry = model.entry_at(source_row) if isinstance(model, ActivityModel) else None
        if entry is None:
            return True
        if self._decision and entry.decision != self._decision:
            return False
        if self._workspace and entry.workspace != self._workspace:
            return False
        if not self._text:
            return True
        haystack = " ".join((entry.session, entry.agent, entry.tool, entry.decision, entry.stage,
                             entry.reason, entry.intent_id or "", entry.workspace,
                             sandbox_words(entry), checkpoint_words(entry))).lower()
        return all(word in haystack for word in self._text.split())
