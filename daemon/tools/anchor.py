"""Files reached by a checked path one folder at a time, never through a symlink that appeared since.

The pipeline checks a path fully resolved, so it holds no symlink. Between that check and the
moment a tool touches the file (a pre-hook, a person's answer), anything running as the user
may swap a folder for a symlink. Here every step is an `openat` relative to the folder before
it with `O_NOFOLLOW`, so a swapped-in symlink is met, not followed: the call is refused.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable

from intentd.daemon.tools.base import ToolFailed
from intentd.daemon.utils.inflight import temporary_name

# O_PATH walks folders without needing read permission on them (Linux); elsewhere O_RDONLY.
_STEP = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO that slipped past the lstat must not wait for a writer
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class PathChanged(ToolFailed):
    """A symlink or a file now stands where the checked path had a folder (or a file)."""


class NotRegular(ToolFailed):
    """A FIFO, socket or device: tools never open one (reading a FIFO waits forever)."""


def changed(path: str, step: str) -> PathChanged:
    return PathChanged(f"{path} changed since it was checked: {step} is no longer what it was "
                       "(a symlink or another file took its place); nothing was done")


def not_regular(path: str) -> NotRegular:
    return NotRegular(f"{path} is not a regular file (a FIFO, socket or device); it is not opened")


class Anchor:
    """The deepest existing folder of a checked path, held open, and what lies below it."""

    def __init__(self, path: str) -> None:
        if not os.path.isabs(path):
            raise ValueError(f"an anchor needs an absolute path, not {path!r}")
        parts = [p for p in path.split("/") if p]
        self.path = path
        self.name = parts[-1] if parts else ""
        self.fd, self.missing = walk(path, parts[:-1])

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Anchor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lstat(self) -> os.stat_result | None:
        """The final component as it is now (never followed); None when it does not exist."""
        if self.missing or not self.name:
            return None
        try:
            return os.stat(self.name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def open_regular(self) -> int:
        """A read fd of the file; FileNotFoundError, IsADirectoryError, PathChanged, NotRegular."""
        info = self.lstat()
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", self.path)
        _must_be_regular(self.path, info)
        try:
            fd = os.open(self.name, READ_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            raise _refusal(self.path, self.name, exc) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between the lstat and the open
            os.close(fd)
            raise not_regular(self.path)
        return fd

    def open_folder(self) -> int:
        """A listable fd of the path as a folder."""
        if self.missing or not self.name:
            if not self.name and not self.missing:
                return os.open("/", LIST_FLAGS)
            raise FileNotFoundError(errno.ENOENT, "no such folder", self.path)
        try:
            return os.open(self.name, LIST_FLAGS, dir_fd=self.fd)
        except NotADirectoryError:
            info = self.lstat()
            if info is not None and not stat.S_ISLNK(info.st_mode):
                raise  # a file, as it was when checked: not a folder
            raise changed(self.path, self.name) from None
        except OSError as exc:
            raise _refusal(self.path, self.name, exc) from None

    def write(self, data: bytes, mode: int | None = None) -> None:
        """Atomically replace (or create) the file: a temp file in the held folder, fsync, rename.
        Missing folders are created one by one, each opened without following symlinks. The
        file keeps its mode unless `mode` is given."""
        folder = self._make_folders()
        try:
            info = _final_info(self.path, self.name, folder)
            if mode is None and info is not None:
                mode = info.st_mode & 0o7777
            _replace(folder, os.path.dirname(self.path), self.name, data, mode)
        finally:
            if folder != self.fd:
                os.close(folder)

    def _make_folders(self) -> int:
        folder = self.fd
        for index, part in enumerate(self.missing):
            try:
                try:
                    os.mkdir(part, 0o777, dir_fd=folder)
                except FileExistsError:
                    pass  # made meanwhile: the open below still refuses a symlink
                child = os.open(part, _STEP, dir_fd=folder)
            except OSError as exc:
                raise _refusal(self.path, "/".join(self.missing[:index + 1]), exc) from None
            finally:
                if folder != self.fd:
                    os.close(folder)
            folder = child
        return folder


class HeldFolder:
    """A command's working folder, reached from / one folder at a time without following a
    symlink and held open from the recheck on: the command starts in it through
    /proc/self/fd, not in whatever a symlink swapped in at its path since then names."""

    def __init__(self, path: str) -> None:
        self._path = path
        self.fd, missing = walk(path, [p for p in path.split("/") if p])
        if missing:
            os.close(self.fd)
            raise ToolFailed(f"{path} does not exist any more")

    def path(self) -> str:
        """Where a process started now may chdir: the held folder itself, where there is a
        /proc (a child process has the same descriptors); else the path as checked."""
        proc = f"/proc/self/fd/{self.fd}"
        return proc if os.path.isdir(proc) else self._path

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def hold_anchors(paths: Iterable[str]) -> tuple[Anchor, ...]:
    """An anchor for each path, all or none."""
    held: list[Anchor] = []
    try:
        for path in paths:
            held.append(Anchor(path))
    except BaseException:
        release(held)
        raise
    return tuple(held)


def release(anchors: Iterable[Anchor]) -> None:
    for anchor in anchors:
        anchor.close()


def walk(path: str, folders: list[str]) -> tuple[int, tuple[str, ...]]:
    """An fd of the deepest existing folder along `folders` (from /), and the folders missing."""
    fd = os.open("/", _STEP)
    for index, part in enumerate(folders):
        try:
            child = os.open(part, _STEP, dir_fd=fd)
        except FileNotFoundError:
            return fd, tuple(folders[index:])
        except OSError as exc:
            os.close(fd)
            raise _refusal(path, "/" + "/".join(folders[:index + 1]), exc) from None
        os.close(fd)
        fd = child
    return fd, ()


def _refusal(path: str, step: str, exc: OSError) -> OSError | ToolFailed:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return changed(path, step)
    if exc.errno == errno.ENXIO:  # a socket
        return not_regular(path)
    return exc


def _must_be_regular(path: str, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise changed(path, os.path.basename(path))
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    if not stat.S_ISREG(info.st_mode):
        raise not_regular(path)


def _final_info(path: str, name: str, folder: int) -> os.stat_result | None:
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    _must_be_regular(path, info)
    return info


def _replace(folder: int, folder_path: str, name: str, data: bytes, mode: int | None) -> None:
    with temporary_name(folder_path) as temp:  # checkpoints taken meanwhile leave it out
        fd = os.open(temp, _TEMP, 0o666, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=folder)
            except FileNotFoundError:
                pass
            raise
    _fsync_folder(folder)


def _fsync_folder(folder: int) -> None:
    try:
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
