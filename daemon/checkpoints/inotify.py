"""A thin binding to Linux inotify (ctypes): one instance, watches per folder, events read in order."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
# Every event that can mean a change under a folder; opens and reads are left out on purpose.
CHANGES = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
           | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
FOLDER_ONLY = IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK
_HEADER = struct.Struct("iIII")
_BUFFER = 1 << 20


@dataclass(frozen=True, slots=True)
class Event:
    wd: int
    mask: int
    cookie: int
    name: bytes


class WatchFailed(OSError):
    """A watch could not be added; errno says why (ENOSPC: the per-user watch limit is reached)."""


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        for name in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
            getattr(libc, name)
    except (OSError, AttributeError):
        return None
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    return libc


_LIBC = _libc()


def available() -> bool:
    return _LIBC is not None


class Inotify:
    """One inotify instance; read() never blocks (the caller polls fileno())."""

    def __init__(self) -> None:
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "inotify is not available on this platform")
        fd = int(_LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def add_watch(self, path: str, mask: int = CHANGES | FOLDER_ONLY) -> int:
        assert _LIBC is not None
        wd = int(_LIBC.inotify_add_watch(self._fd, os.fsencode(path), mask))
        if wd < 0:
            err = ctypes.get_errno()
            raise WatchFailed(err, os.strerror(err), path)
        return wd

    def rm_watch(self, wd: int) -> None:
        assert _LIBC is not None
        _LIBC.inotify_rm_watch(self._fd, wd)  # EINVAL when already gone: nothing to do

    def read(self) -> Iterator[Event]:
        """Every event queued now, oldest first."""
        while True:
            try:
                data = os.read(self._fd, _BUFFER)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, cookie, length = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size
                name = data[offset:offset + length].rstrip(b"\0")
                offset += length
                yield Event(wd, mask, cookie, name)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
