"""Checkpoints: save what a tool call may change, list, diff and restore, cheap at any repo size.

Storage lives outside the workspace (a private bare git repository for file contents, a SQLite
manifest for what each checkpoint holds). A file tool's checkpoint saves the paths it names; a
command's saves what the file watcher (inotify on Linux) saw change since the previous checkpoint,
plus a scan of any folder it cannot watch, and a full scan when events may have been lost.
"""

from typing import TYPE_CHECKING, Any

from .errors import (
    CheckpointError,
    CorruptStore,
    DiskFull,
    InvalidPath,
    RestoreFailed,
    UnknownCheckpoint,
    WorkspaceMissing,
)
from .model import Checkpoint, Coverage, FileDiff, RestoreResult

if TYPE_CHECKING:
    from .store import CheckpointStore


def __getattr__(name: str) -> Any:
    # The store pulls in dulwich, sqlite and watchdog; `intentd --help` and the Claude Code
    # hook (the CLI twice per tool call) should not pay for that.
    if name == "CheckpointStore":
        from .store import CheckpointStore

        return CheckpointStore
    raise AttributeError(name)

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "CorruptStore",
    "Coverage",
    "DiskFull",
    "FileDiff",
    "InvalidPath",
    "RestoreFailed",
    "RestoreResult",
    "UnknownCheckpoint",
    "WorkspaceMissing",
]
