"""The append-only ledger: one JSON line per call (ToolIntent + ToolReceipt), never a half line."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from intentd.daemon.engine.statedir import ensure_private

MAX_ARG_CHARS = 200  # the ledger keeps digests of large arguments, not their content


def summarize_args(args: Any) -> Any:
    """Arguments with long texts shortened: enough for a person to recognise the call."""
    if isinstance(args, dict):
        return {str(k)[:100]: summarize_args(v) for k, v in list(args.items())[:50]}
    if isinstance(args, list):
        return [summarize_args(v) for v in args[:20]]
    if isinstance(args, str) and len(args) > MAX_ARG_CHARS:
        return args[:MAX_ARG_CHARS] + f"... [{len(args)} chars]"
    return args


class Ledger:
    """Each entry is written with one write() on an O_APPEND file: complete or absent."""

    def __init__(self, path: Path) -> None:
        self.path = path
        ensure_private(path.parent)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        st = os.fstat(self._fd)
        if st.st_mode & 0o077 and st.st_uid == os.getuid():  # written before it was kept private
            os.fchmod(self._fd, 0o600)
        self._lock = threading.Lock()

    def append(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            written = os.write(self._fd, line)
            if written != len(line):  # only on a full disk; never leave a partial line behind
                raise OSError(f"ledger write cut short ({written} of {len(line)} bytes)")

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = -1


def read_ledger(path: Path) -> Iterator[dict[str, Any]]:
    """Entries oldest first; a damaged line (a crash mid-write on a foreign file system) is skipped."""
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict):
                yield entry
