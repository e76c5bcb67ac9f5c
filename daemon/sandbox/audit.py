"""The scope audit: after a command, changes outside the intent's scope are found and undone.

It reads the checkpoint taken before the command through the store's public API: `diff` names
every path that changed since (the store's watcher and scan rules decide what is seen), and
`restore(..., path=...)` brings each out-of-scope one back (created files removed), after a
checkpoint of what the command left, so the audit itself can be undone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from intentd.daemon.engine.intents import Intent

log = logging.getLogger(__name__)
NEVER_IN_SCOPE = (".orchestration/",)  # the person's own files, whatever a scope's globs say


class Store(Protocol):
    def create(self, paths: None, *, label: str) -> Any: ...
    def diff(self, checkpoint_id: str) -> list[Any]: ...
    def restore(self, checkpoint_id: str, *, path: str | None = None) -> Any: ...


@dataclass(frozen=True)
class ScopeAudit:
    """What the audit found outside the scope, and what became of it."""

    mode: str                                # restore | report
    checkpoint_id: str
    intent_id: str | None
    found: tuple[tuple[str, str], ...]       # (path, added | modified | deleted)
    undone: tuple[str, ...] = ()
    left: tuple[tuple[str, str], ...] = ()   # (path, why it could not be undone)
    undo_checkpoint: str | None = None       # restoring it undoes the audit

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "checkpoint_id": self.checkpoint_id, "intent_id": self.intent_id,
                "out_of_scope": [list(item) for item in self.found], "undone": list(self.undone),
                "left": [list(item) for item in self.left],
                "undo_checkpoint": self.undo_checkpoint, "message": self.message()}

    def message(self) -> str:
        """What the agent is told, one path a line."""
        scope = f"intent {self.intent_id}'s owned_scope" if self.intent_id else "any intent's scope"
        lines = [f"[scope audit: this command changed files outside {scope}]"]
        undone, left = set(self.undone), dict(self.left)
        for path, status in self.found:
            if path in undone:
                what = "created; removed" if status == "added" else f"{status}; brought back"
                lines.append(f"  undone: {path} ({what} from checkpoint {self.checkpoint_id})")
            elif path in left:
                lines.append(f"  NOT undone: {path} ({status}; {left[path]})")
            else:
                lines.append(f"  left in place (scope_audit: report): {path} ({status})")
        return "\n".join(lines)


def in_scope(intent: Intent | None, path: str) -> bool:
    if path.startswith(NEVER_IN_SCOPE):
        return False
    return intent is not None and intent.owns(path)


def audit(store: Store, checkpoint_id: str, intent: Intent | None, mode: str) -> ScopeAudit | None:
    """Compare what changed since checkpoint_id with the intent's scope; None when all is in it.
    In restore mode each out-of-scope path is brought back to its state at the checkpoint."""
    if mode == "off":
        return None
    found = tuple((d.path, d.status) for d in store.diff(checkpoint_id)
                  if not in_scope(intent, d.path))
    if not found:
        return None
    intent_id = intent.id if intent else None
    if mode != "restore":
        return ScopeAudit(mode, checkpoint_id, intent_id, found)
    # Saves what the command left (an undo of the audit) and records its new files as absent
    # before it: only then can a path restore remove them.
    before = store.create(None, label=f"scope audit: before undoing changes since {checkpoint_id}")
    undone: list[str] = []
    left: list[tuple[str, str]] = []
    for path, _status in found:
        try:
            result = store.restore(checkpoint_id, path=path)
        except Exception as exc:  # one path that cannot be restored must not hide the others
            log.warning("scope audit: restoring %s from %s failed: %s", path, checkpoint_id, exc)
            left.append((path, f"restore failed: {exc}"))
            continue
        left.extend(result.skipped)
        if path in result.restored or path in result.deleted:
            undone.append(path)
    return ScopeAudit(mode, checkpoint_id, intent_id, found, tuple(undone), tuple(left), before.id)
