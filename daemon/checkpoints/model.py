"""The values the checkpoint API hands out: checkpoints, file diffs, restore results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

CheckpointKind = Literal["files", "command", "baseline"]  # "baseline": a warm-up, never listed
DiffStatus = Literal["modified", "added", "deleted"]
CoverageMode = Literal["watched", "partial", "scanning"]


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
    coverage: str = ""  # how changes were found when not by the watcher alone (a scan, and why)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "created_at": self.created_at, "label": self.label, "kind": self.kind,
                "files": list(self.files), "skipped": _pairs(self.skipped),
                "coverage": self.coverage}


@dataclass(frozen=True)
class Coverage:
    """How much of the workspace the file watcher sees. A folder it cannot watch is scanned, with
    everything under it, at every command checkpoint; with no watcher at all, everything is."""

    watching: bool
    watched_folders: int
    unwatched: tuple[str, ...] = ()
    reason: str = ""
    overflows: int = 0

    @property
    def mode(self) -> CoverageMode:
        if not self.watching:
            return "scanning"
        return "partial" if self.unwatched else "watched"

    def summary(self) -> str:
        """One sentence for a person: what is watched, and what is scanned instead, and why."""
        if self.mode == "watched":
            return f"watching all {self.watched_folders:,} folders"
        if self.mode == "partial":
            return (f"watching {self.watched_folders:,} folders; {len(self.unwatched):,} folder(s) "
                    f"scanned at every command checkpoint ({self.reason})")
        why = f" ({self.reason})" if self.reason else ""
        return f"not watching{why}: every command checkpoint scans the whole workspace"

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "watched_folders": self.watched_folders,
                "unwatched": list(self.unwatched[:20]), "unwatched_count": len(self.unwatched),
                "reason": self.reason, "overflows": self.overflows, "summary": self.summary()}


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
