"""Splits the daemon's byte stream into newline-delimited messages, refusing oversized lines."""

from __future__ import annotations


class LineBuffer:
    """Collects bytes and hands back complete lines; a line over the limit is skipped, not held."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self.skipped_lines = 0
        self._buffer = bytearray()
        self._scanned = 0  # bytes already known to hold no newline: each byte is scanned once
        self._skipping = False

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        lines: list[bytes] = []
        start = 0
        while True:
            end = self._buffer.find(b"\n", max(start, self._scanned))
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            elif end > start:
                lines.append(bytes(self._buffer[start:end]))
            start = end + 1
        del self._buffer[:start]
        self._scanned = len(self._buffer)
        if self._scanned > self.max_line_bytes:
            # Drop what we hold of the oversized line and everything up to its newline.
            if not self._skipping:
                self.skipped_lines += 1
            self._skipping = True
            self._buffer.clear()
            self._scanned = 0
        return lines

    def clear(self) -> None:
        self._buffer.clear()
        self._scanned = 0
        self._skipping = False
