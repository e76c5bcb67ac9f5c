"""The values the checkpoint API hands out: checkpoints, file diffs, restore results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

CheckpointKind = Literal["files", "command"]
DiffStatus = Literal["modified", "added", "deleted"]


@dataclass(frozen=True)
class Checkpoint:
    """One saved point in the workspace's history.

    `files` lists the paths this checkpoint recorded: for a "files" checkpoint the paths the
    file tool named (plus anything seen changing since the previous checkpoint), for a "command"
    checkpoint what changed since the previous one. Its logical content is the whole known state.
    """

    id: str
    created_at: float
    label: str
    files: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    kind: CheckpointKind

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "created_at": self.created_at, "label": self.label, "kind": self.kind,
                "files": list(self.files), "skipped": _pairs(self.skipped)}


@dataclass(frozen=True)
class FileDiff:
    """How one file differs between two states, as a unified diff."""

    path: str
    status: DiffStatus
    unified: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "unified": self.unified}


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did; `safety_checkpoint_id` undoes it.

    `skipped` lists paths left alone, with why (not saved at the checkpoint, no state at the
    checkpoint, or current content not saved so overwriting it could not be undone).
    """

    checkpoint_id: str
    safety_checkpoint_id: str
    restored: tuple[str, ...]
    deleted: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"checkpoint_id": self.checkpoint_id, "safety_checkpoint_id": self.safety_checkpoint_id,
                "restored": list(self.restored), "deleted": list(self.deleted),
                "skipped": _pairs(self.skipped)}


def _pairs(items: tuple[tuple[str, str], ...]) -> list[list[str]]:
    """(path, why) pairs as JSON arrays: [[PATH, WHY], ...]."""
    return [list(item) for item in items]
