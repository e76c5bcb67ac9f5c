"""Checkpoints: save what a tool call may change, list, diff and restore, cheap at any repo size.

Storage lives outside the workspace (a private bare git repository for file contents, a SQLite
manifest for what each checkpoint holds). A file tool's checkpoint saves the paths it names; a
command's saves what a watchdog observer saw change since the previous checkpoint, with a full
scan when events may have been lost.
"""

from .errors import (
    CheckpointError,
    CorruptStore,
    DiskFull,
    InvalidPath,
    RestoreFailed,
    UnknownCheckpoint,
    WorkspaceMissing,
)
from .model import Checkpoint, FileDiff, RestoreResult
from .store import CheckpointStore

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "CorruptStore",
    "DiskFull",
    "FileDiff",
    "InvalidPath",
    "RestoreFailed",
    "RestoreResult",
    "UnknownCheckpoint",
    "WorkspaceMissing",
]
