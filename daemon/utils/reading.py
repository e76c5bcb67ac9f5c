"""Reading a file whole, sized by its stat, never waiting on a FIFO: shared by the tools and the
checkpoints."""

from __future__ import annotations

import os
import stat

CHUNK = 1 << 16  # the least a read asks for past the file's stat size (a file that grew)


def read_fd(fd: int, size: int, limit: int) -> bytes:
    """At most `limit` bytes from fd, to its end. `size` (its fstat) sizes the first read, so a
    small file costs one small buffer, not one of `limit` bytes; a file that grew is read on."""
    chunks: list[bytes] = []
    total = 0
    want = min(size + 1, limit)  # one byte more than the size: the end is seen in one read
    while total < limit:
        chunk = os.read(fd, max(1, min(limit - total, max(want - total, CHUNK))))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class NotRegular(OSError):
    """The path is a FIFO, socket or device: it has no contents to read."""


def read_regular(path: str | os.PathLike[str], limit: int = 64 * 1024 * 1024) -> bytes:
    """The bytes of a regular file, at most `limit`. A FIFO, socket or device raises NotRegular
    at once (never waits on it); a missing file raises FileNotFoundError as open() does."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{os.fspath(path)} is not a regular file")
        return read_fd(fd, info.st_size, limit)
    finally:
        os.close(fd)
