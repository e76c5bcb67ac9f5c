"""Reading newline-delimited messages with a size limit that never buffers an oversized line."""

from __future__ import annotations

import asyncio


class LineTooLong(Exception):
    """A line went over the limit; it has been read past and dropped."""


async def read_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next line without its newline; None at end of stream. Raises LineTooLong.

    The reader's own limit bounds memory: an over-limit line is consumed chunk by chunk
    up to its newline and thrown away, so the connection stays usable afterwards.
    """
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial or None  # the last line may come without a newline
    except asyncio.LimitOverrunError as exc:
        await _skip_to_newline(reader, exc.consumed)
        raise LineTooLong() from None
    return line[:-1]


async def _skip_to_newline(reader: asyncio.StreamReader, available: int) -> None:
    while True:
        chunk = await reader.read(max(available, 65536))
        if not chunk:
            return
        if b"\n" in chunk:
            # What follows the newline belongs to the next message: give it back.
            rest = chunk[chunk.index(b"\n") + 1:]
            if rest:
                reader._buffer[:0] = rest  # type: ignore[attr-defined]  # StreamReader has no unread()
            return
        available = 65536
