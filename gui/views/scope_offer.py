""""Add to this intent's scope…" on a table row: a call refused at `scope` (Activity) or an approval
whose target lies outside its intent (Approvals); and the scope lines offered for its path."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QTableView

from intentd.gui.state.records import Approval, LedgerEntry

# The scope stage's refusals name the path: "... does not own src/x.py (owned_scope: ...", or,
# for a folder whose contents the scope owns, "... but not the folder src itself: deleting ...".
REFUSED_PATH = re.compile(r"does not own (?P<path>.+?) \(owned_scope: "
                          r"|but not the folder (?P<folder>.+?) itself: deleting")
GLOB_SPECIAL = re.compile(r"([\\*?\[\]])")  # what a gitignore line reads as more than itself


def workspace_path(path: str) -> str | None:
    """`path` as the scope stage names it (relative, `.` and `..` resolved); None if it is not
    inside the workspace, where no scope line can own it."""
    if not path or path.startswith("/"):
        return None
    normal = posixpath.normpath(path)
    return None if normal in (".", "..") or normal.startswith("../") else normal


def _line(glob: str) -> str:
    """A line with no `/` but at its end owns that name in every folder, and one that starts
    with `!` or `#` is an exclusion or a comment: a leading `/` keeps it to the top."""
    return glob if "/" in glob.rstrip("/") and not glob.startswith(("!", "#")) else "/" + glob


def _escaped(path: str) -> str:
    """Glob characters taken literally; trailing spaces kept (a line's are otherwise dropped)."""
    text = GLOB_SPECIAL.sub(r"\\\1", path)
    bare = text.rstrip(" ")
    return bare + "\\ " * (len(text) - len(bare))


def scope_choices(path: str) -> list[str]:
    """The scope lines to offer for a path: one that owns exactly it, and one for everything in
    its folder (`dir/**`; never a bare `**`, which would be the whole workspace)."""
    folder = posixpath.dirname(path)
    return [_line(_escaped(path))] + ([_line(_escaped(folder) + "/**")] if folder else [])


@dataclass(frozen=True)
class ScopeOffer:
    workspace: str
    intent_id: str
    path: str


def offer_for_entry(entry: LedgerEntry | None) -> ScopeOffer | None:
    if entry is None or entry.decision != "deny" or entry.stage != "scope" or not entry.intent_id:
        return None
    found = REFUSED_PATH.search(entry.reason)
    path = workspace_path(found["path"] or found["folder"]) if found else None
    return ScopeOffer(entry.workspace, entry.intent_id, path) if path else None


def offer_for_approval(approval: Approval | None) -> ScopeOffer | None:
    if approval is None or not approval.intent_id:
        return None
    raw = approval.args.get("path")
    path = workspace_path(raw) if isinstance(raw, str) else None
    if path is None:
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
