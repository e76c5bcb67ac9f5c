"""Restore: bring files back to a checkpoint's state, all or nothing as far as the file system allows.

Every new content is first written to a temp file next to its target; only when all are written
are they renamed into place and the agent's new files deleted. A failure before that leaves the
workspace as it was; a failure during it is rolled back from the safety checkpoint's blobs.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field

from .errors import CheckpointError, DiskFull, RestoreFailed
from .objects import BlobStore
from .recorder import Recorder
from .state import ABSENT, Entry


@dataclass(frozen=True)
class Op:
    """Put path back to target; current is what the safety checkpoint saw there."""

    path: str
    target: Entry
    current: Entry


def plan(targets: Mapping[str, Entry],
         current: Mapping[str, Entry]) -> tuple[list[Op], list[tuple[str, str]]]:
    """The operations a restore needs, and the paths it must leave alone (with why)."""
    ops: list[Op] = []
    skipped: list[tuple[str, str]] = []
    for path in sorted(targets):
        target, now = targets[path], current.get(path, ABSENT)
        if target.same_state(now):
            continue
        if target.kind == "skipped":
            skipped.append((path, f"not saved at the checkpoint ({target.note})"))
        elif now.kind == "skipped":
            why = f"its current content is not saved ({now.note}), so overwriting it could not be undone"
            skipped.append((path, why))
        else:
            ops.append(Op(path, target, now))
    return ops, skipped


@dataclass
class _Work:
    writes: list[tuple[Op, str]] = field(default_factory=list)  # (op, temp file)
    deletes: list[Op] = field(default_factory=list)
    rmdirs: list[str] = field(default_factory=list)  # folders in the way of a restored file
    made_dirs: list[str] = field(default_factory=list)
    done: list[tuple[str, Op | str]] = field(default_factory=list)


class Restorer:
    """Applies a plan to the workspace."""

    def __init__(self, root: str, blobs: BlobStore, recorder: Recorder) -> None:
        self._root = root
        self._blobs = blobs
        self._recorder = recorder

    def apply(self, ops: list[Op]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
        """Carry out ops; returns (restored, deleted, skipped)."""
        ready, skipped = self._verify(ops)
        work = _Work()
        try:
            self._prepare(ready, work)
        except BaseException as exc:
            self._discard(work)
            if not isinstance(exc, Exception):
                raise
            raise _failure(exc, "nothing was changed") from exc
        try:
            self._commit(work)
        except BaseException as exc:
            clean = self._roll_back(work)
            self._discard(work)
            if not isinstance(exc, Exception):
                raise
            state = ("the workspace was rolled back" if clean else
                     "the workspace could not be fully rolled back; restore the safety checkpoint")
            raise _failure(exc, state) from exc
        restored = [op.path for op, _ in work.writes]
        deleted = [item.path for action, item in work.done if isinstance(item, Op) and action == "deleted"]
        return restored, deleted, skipped

    def _verify(self, ops: list[Op]) -> tuple[list[Op], list[tuple[str, str]]]:
        """Drop ops already satisfied; refuse to overwrite content that is not in the store."""
        ready: list[Op] = []
        skipped: list[tuple[str, str]] = []
        for op in ops:
            st = self._recorder.stat(op.path)
            seen = self._recorder.observe(op.path, st, op.current, trust_stat=True).entry
            if seen.same_state(op.target) or (not seen.present and not op.target.present):
                continue
            if seen.present and not seen.same_state(op.current):
                why = seen.note if seen.kind == "skipped" else "changed after the safety checkpoint"
                skipped.append((op.path, f"its current content is not saved ({why})"))
                continue
            ready.append(op)
        return ready, skipped

    def _prepare(self, ops: list[Op], work: _Work) -> None:
        deleting = {op.path for op in ops if not op.target.present}
        for op in ops:
            if not op.target.present:
                work.deletes.append(op)
                continue
            self._make_parents(op.path, work)
            full = os.path.join(self._root, op.path)
            if os.path.isdir(full) and not os.path.islink(full):
                work.rmdirs.extend(self._folder_in_the_way(op.path, deleting))
            work.writes.append((op, self._write_temp(op.path, op.target)))

    def _make_parents(self, path: str, work: _Work) -> None:
        """Create missing parent folders; refuse to go through symlinks or files."""
        prefix = ""
        for part in path.split("/")[:-1]:
            prefix = f"{prefix}/{part}" if prefix else part
            full = os.path.join(self._root, prefix)
            try:
                mode = os.lstat(full).st_mode
            except FileNotFoundError:
                os.mkdir(full)
                work.made_dirs.append(full)
                continue
            if not stat.S_ISDIR(mode):
                raise RestoreFailed(f"cannot restore {path}: {prefix} is not a folder any more")

    def _folder_in_the_way(self, path: str, deleting: set[str]) -> list[str]:
        """A folder now stands where a file is restored: fine only if the restore empties it."""
        folders = []
        for folder, dirs, files in os.walk(os.path.join(self._root, path), topdown=False):
            rel = os.path.relpath(folder, self._root).replace(os.sep, "/")
            for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
                if f"{rel}/{name}" not in deleting:
                    raise RestoreFailed(f"cannot restore {path}: the folder there holds "
                                        f"{rel}/{name}, which the checkpoint did not save")
            folders.append(folder)
        return folders

    def _write_temp(self, path: str, entry: Entry) -> str:
        data = self._blobs.get(entry.sha)
        folder, name = os.path.split(os.path.join(self._root, path))
        temp = os.path.join(folder, f".{name[:200]}.intentd-{secrets.token_hex(4)}.tmp")
        if entry.kind == "link":
            os.symlink(os.fsdecode(data), temp)
            return temp
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb", closefd=False) as handle:
                handle.write(data)
            os.fchmod(fd, entry.perm)
            os.fsync(fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(temp)
            raise
        finally:
            os.close(fd)
        return temp

    def _commit(self, work: _Work) -> None:
        for op in work.deletes:
            try:
                os.unlink(os.path.join(self._root, op.path))
            except FileNotFoundError:
                continue
            work.done.append(("deleted", op))
        for folder in work.rmdirs:
            os.rmdir(folder)
            work.done.append(("rmdir", folder))
        for op, temp in work.writes:
            os.replace(temp, os.path.join(self._root, op.path))
            work.done.append(("replaced", op))

    def _roll_back(self, work: _Work) -> bool:
        """Undo what _commit did, newest first, from the blobs the safety checkpoint holds."""
        clean = True
        for _action, item in reversed(work.done):
            try:
                if isinstance(item, str):
                    os.mkdir(item)
                elif item.current.present:
                    os.replace(self._write_temp(item.path, item.current),
                               os.path.join(self._root, item.path))
                else:
                    os.unlink(os.path.join(self._root, item.path))
            except (OSError, CheckpointError):  # keep undoing the rest; reported as unclean
                clean = False
        return clean

    def _discard(self, work: _Work) -> None:
        for _op, temp in work.writes:
            if temp:
                with suppress(OSError):
                    os.unlink(temp)
        for folder in reversed(work.made_dirs):
            with suppress(OSError):
                os.rmdir(folder)


def _failure(exc: Exception, state: str) -> Exception:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(f"restore stopped: no space left on device; {state}")
    if isinstance(exc, CheckpointError):  # keep the kind (corrupt store, ...) and add the state
        return type(exc)(f"{exc}; {state}")
    return RestoreFailed(f"restore stopped: {exc}; {state}")
