"""Errors the checkpoint store raises, each with a message a person can act on."""

from __future__ import annotations


class CheckpointError(Exception):
    """Base class: any failure to create, read or restore a checkpoint."""


class UnknownCheckpoint(CheckpointError):
    """No checkpoint has this id (never existed, or pruned to stay under the storage cap)."""


class WorkspaceMissing(CheckpointError):
    """The workspace folder is gone: moved, renamed or deleted."""


class DiskFull(CheckpointError):
    """The disk filled up while saving; nothing was recorded."""


class CorruptStore(CheckpointError):
    """The store's manifest or objects cannot be read."""


class InvalidPath(CheckpointError):
    """A path argument is not a workspace-relative path the store can handle."""


class RestoreFailed(CheckpointError):
    """A restore could not be carried out; the message says what state the workspace is in."""
