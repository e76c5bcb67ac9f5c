"""A file's new content staged beside it, to be renamed over it: the write is whole or absent."""

from __future__ import annotations

import os
import secrets
from contextlib import suppress


def name_stem(name: str, limit: int = 100) -> str:
    """The name's first `limit` bytes, for a name made from it: not characters, since 81 CJK
    ones are a legal 243-byte name and the name made must stay under the 255-byte limit too (a
    cut mid-character is fine: the bytes are what the file system sees)."""
    return os.fsdecode(os.fsencode(name)[:limit])


def stage(folder: int, name: str, data: bytes, mode: int, link: bool = False) -> str:
    """data (a symlink's target with `link`) written and synced under a fresh random name beside
    `name`, in the folder open as `folder`; returns that name. The name is new (O_EXCL) and
    never followed, so nothing another process prepared there (a FIFO, a folder, a symlink) is
    ever opened."""
    temp = f".{name_stem(name)}.intentd-{secrets.token_hex(4)}.tmp"
    if link:
        os.symlink(os.fsdecode(data), temp, dir_fd=folder)
        return temp
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise
    finally:
        os.close(fd)
    return temp
