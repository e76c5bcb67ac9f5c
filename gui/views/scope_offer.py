""""Add to this intent's scope…" on a table row: a call refused at `scope` (Activity) or an approval
whose target lies outside its intent (Approvals)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QTableView

from intentd.gui.state.records import Approval, LedgerEntry

# The scope stage's refusal names the path: "... does not own src/x.py (owned_scope: ...".
REFUSED_PATH = re.compile(r"does not own (?P<path>.+?) \(owned_scope: ")


@dataclass(frozen=True)
class ScopeOffer:
    workspace: str
    intent_id: str
    path: str


def offer_for_entry(entry: LedgerEntry | None) -> ScopeOffer | None:
    if entry is None or entry.decision != "deny" or entry.stage != "scope" or not entry.intent_id:
        return None
    found = REFUSED_PATH.search(entry.reason)
    return ScopeOffer(entry.workspace, entry.intent_id, found["path"]) if found else None


def offer_for_approval(approval: Approval | None) -> ScopeOffer | None:
    if approval is None or not approval.intent_id:
        return None
    path = approval.args.get("path")
    if not isinstance(path, str) or not path or path.startswith("/"):
        return None  # a command, or a path outside the workspace: no scope line can own it
    return ScopeOffer(approval.workspace, approval.intent_id, path)


def attach(table: QTableView, offer_at: Callable[[QModelIndex], ScopeOffer | None],
           open_offer: Callable[[ScopeOffer], object]) -> QAction:
    """A context-menu action on `table`, enabled on rows that have an offer."""
    action = QAction("Add to this intent's &scope…", table)
    action.setObjectName("add_to_scope")
    table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
    table.addAction(action)

    def current_offer() -> ScopeOffer | None:
        index = table.currentIndex()
        return offer_at(index) if index.isValid() else None

    def refresh(*_args: object) -> None:
        action.setEnabled(current_offer() is not None)

    def trigger() -> None:
        offer = current_offer()
        if offer is not None:
            open_offer(offer)

    table.selectionModel().currentRowChanged.connect(refresh)
    table.model().modelReset.connect(refresh)
    action.triggered.connect(trigger)
    refresh()
    return action
