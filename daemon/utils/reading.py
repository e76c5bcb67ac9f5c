"""Reading an open file whole, sized by its stat: shared by the tools and the checkpoints."""

from __future__ import annotations

import os

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
