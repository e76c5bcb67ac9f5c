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

from intentd.daemon.utils.staging import name_stem, stage

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


class _Folders:
    """Workspace folders opened one level at a time from the root, never through a symlink.
    Every change is made relative to these descriptors, so a folder swapped for a symlink after
    it was opened cannot redirect a write, rename or delete outside the workspace."""

    def __init__(self, root: str, deleting: set[str] | None = None) -> None:
        self._fds: dict[str, int] = {"": os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)}
        self.made: list[str] = []  # folders created, parents first
        # A file or symlink standing where a folder must be made, which the restore deletes
        # anyway (`rm -rf src; touch src`): renamed aside (path: its name there) until the
        # commit deletes it, or put back when the restore fails.
        self._deleting = deleting or set()
        self.asides: dict[str, str] = {}

    def fd(self, folder: str, *, create: bool = False) -> int:
        """The descriptor of folder ('' is the root); FileNotFoundError when it is missing."""
        found = self._fds.get(folder)
        if found is not None:
            return found
        parent, _, name = folder.rpartition("/")
        parent_fd = self.fd(parent, create=create)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not create:
                raise
            os.mkdir(name, dir_fd=parent_fd)
            self.made.append(folder)
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except (NotADirectoryError, OSError) as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            if not create or folder not in self._deleting:
                raise RestoreFailed(f"{folder} is not a folder any more (a file or a symlink "
                                    "stands there now, which this checkpoint did not save: move "
                                    "it away, then restore again)") from None
            aside = f".{name_stem(name)}.intentd-aside-{secrets.token_hex(4)}"
            os.rename(name, aside, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)  # never followed
            self.asides[folder] = aside
            os.mkdir(name, dir_fd=parent_fd)
            self.made.append(folder)
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        self._fds[folder] = fd
        return fd

    def split(self, path: str, *, create: bool = False) -> tuple[int, str]:
        """(descriptor of path's folder, path's own name)."""
        folder, _, name = path.rpartition("/")
        return self.fd(folder, create=create), name

    def split_now(self, path: str) -> tuple[int, str]:
        """As split, with the name the path's file has now (aside, when it was moved there)."""
        folder, name = self.split(path)
        return folder, self.asides.get(path, name)

    def put_back_asides(self) -> None:
        """The files moved aside back where they stood (the restore failed): after the folders
        made in their place are gone again."""
        for path, aside in reversed(list(self.asides.items())):
            with suppress(OSError, CheckpointError):
                folder, name = self.split(path)
                os.rename(aside, name, src_dir_fd=folder, dst_dir_fd=folder)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class _Work:
    folders: _Folders
    writes: list[tuple[Op, str]] = field(default_factory=list)  # (op, temp file name)
    deletes: list[Op] = field(default_factory=list)
    rmdirs: list[str] = field(default_factory=list)  # folders in the way of a restored file
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
        work = _Work(_Folders(self._root, {op.path for op in ready if not op.target.present}))
        try:
            self._run(work, ready)
        finally:
            work.folders.close()
        restored = [op.path for op, _ in work.writes]
        deleted = [item.path for action, item in work.done if isinstance(item, Op) and action == "deleted"]
        return restored, deleted, skipped

    def _run(self, work: _Work, ready: list[Op]) -> None:
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
            try:
                folder, name = work.folders.split(op.path, create=True)
            except RestoreFailed as exc:
                raise RestoreFailed(f"cannot restore {op.path}: {exc}") from None
            if _is_folder(folder, name):
                work.rmdirs.extend(self._folder_in_the_way(op.path, deleting))
            work.writes.append((op, self._write_temp(folder, name, op.target)))

    def _folder_in_the_way(self, path: str, deleting: set[str]) -> list[str]:
        """A folder now stands where a file is restored: fine only if the restore empties it."""
        folders = []
        for folder, dirs, files in os.walk(os.path.join(self._root, path), topdown=False):
            rel = os.path.relpath(folder, self._root).replace(os.sep, "/")
            for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
                if f"{rel}/{name}" not in deleting:
                    raise RestoreFailed(f"cannot restore {path}: the folder there holds "
                                        f"{rel}/{name}, which the checkpoint did not save")
            folders.append(rel)
        return folders

    def _write_temp(self, folder: int, name: str, entry: Entry) -> str:
        """Stage entry's content next to name (in the folder open as folder); returns the temp name."""
        return stage(folder, name, self._blobs.get(entry.sha), entry.perm, entry.kind == "link")

    def _commit(self, work: _Work) -> None:
        folders = work.folders
        for op in work.deletes:
            try:
                folder, name = folders.split_now(op.path)
                os.unlink(name, dir_fd=folder)
            except FileNotFoundError:
                continue
            work.done.append(("deleted", op))
        for rel in work.rmdirs:
            folder, name = folders.split(rel)
            os.rmdir(name, dir_fd=folder)
            work.done.append(("rmdir", rel))
        for op, temp in work.writes:
            folder, name = folders.split(op.path)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
            work.done.append(("replaced", op))

    def _roll_back(self, work: _Work) -> bool:
        """Undo what _commit did, newest first, from the blobs the safety checkpoint holds."""
        clean = True
        for _action, item in reversed(work.done):
            try:
                if isinstance(item, str):
                    folder, name = work.folders.split(item)
                    os.mkdir(name, dir_fd=folder)
                    continue
                folder, name = work.folders.split_now(item.path)
                if item.current.present:
                    temp = self._write_temp(folder, name, item.current)
                    os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
                else:
                    os.unlink(name, dir_fd=folder)
            except (OSError, CheckpointError):  # keep undoing the rest; reported as unclean
                clean = False
        return clean

    def _discard(self, work: _Work) -> None:
        for op, temp in work.writes:
            with suppress(OSError, CheckpointError):
                folder, _name = work.folders.split(op.path)
                os.unlink(temp, dir_fd=folder)
        for rel in reversed(work.folders.made):
            with suppress(OSError, CheckpointError):
                folder, name = work.folders.split(rel)
                os.rmdir(name, dir_fd=folder)
        work.folders.put_back_asides()


def _is_folder(folder: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(name, dir_fd=folder).st_mode)
    except FileNotFoundError:
        return False


def _failure(exc: Exception, state: str) -> Exception:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(f"restore stopped: no space left on device; {state}")
    if isinstance(exc, CheckpointError):  # keep the kind (corrupt store, ...) and add the state
        return type(exc)(f"{exc}; {state}")
    return RestoreFailed(f"restore stopped: {exc}; {state}")
