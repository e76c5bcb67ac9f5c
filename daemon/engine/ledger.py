"""The append-only ledger: one JSON line per call (ToolIntent + ToolReceipt), never a half line.

`ledger.jsonl` is the live file. Past `rotate_bytes` it is renamed, whole, to `ledger.N.jsonl`
(N = 1, 2, … oldest first) and a new live file begins: every line is kept, in order, and a line is
never split across files. Readers and the query index see the files as one sequence.

Each line ends with its link in a hash chain, `"chain": {"seq": N, "prev": "<sha256>"}`: its number
and the sha256 of the exact bytes (newline included) of the line before it, across rotated files
too. The first chained line of a ledger links to the last unchained line before it, or to
GENESIS. intentd.daemon.trace.chain walks the chain.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from intentd.daemon.utils.statedir import ensure_private

MAX_ARG_CHARS = 200  # the ledger keeps digests of large arguments, not their content
ROTATE_BYTES = 64 * 1024 * 1024
ROOM_NEEDED = 16 * 1024  # free space below which a ledger that failed stays refused
ARCHIVE = re.compile(r"^(?P<stem>.+)\.(?P<number>\d+)\.jsonl$")
GENESIS = "0" * 64  # the `prev` of the first line of a ledger that had none before it
CHAIN_KEY = b'"chain": {"seq": '
CHAIN_TAIL = re.compile(rb'"chain": \{"seq": (\d+), "prev": "([0-9a-f]{64})"\}\}\n?$')
# json.dumps(entry, ensure_ascii=False, default=str), without building an encoder per line
_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode


class LedgerUnwritable(OSError):
    """An entry could not be written whole; nothing of it was left in the file."""


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
    """Entries are appended whole or not at all. A write cut short (a full disk, a file-size
    limit) is cut back to the last whole line, and the ledger says it cannot be written until
    there is room again, so that no call runs without its record."""

    def __init__(self, path: Path, rotate_bytes: int = ROTATE_BYTES) -> None:
        self.path = path
        self.rotate_bytes = rotate_bytes
        self.problem: str | None = None
        ensure_private(path.parent)
        # Writers in other processes (an in-process gateway) take the same lock: a cut-back
        # truncation or a rotation must never meet another writer's line.
        self._lock_fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        self._lock = threading.Lock()
        self._fd = -1
        # The chain's head: the next line's number, the last line's sha256, and the (inode,
        # size) of the live file it holds for; another writer or a rotation changes those.
        self._next_seq, self._last_hash, self._head_at = 1, GENESIS, (-1, -1)
        with self._locked():
            self._fd = self._open()
            self._drop_partial_tail()

    def append(self, entry: dict[str, Any]) -> None:
        if "chain" in entry:
            entry = {k: v for k, v in entry.items() if k != "chain"}
        # backslashreplace: a lone surrogate (bad text from a client) is kept as its \\u escape
        body = _encode(entry).encode("utf-8", "backslashreplace")
        with self._locked():
            st = self._follow_rotation()
            end = st.st_size
            if (st.st_ino, end) != self._head_at:
                self._load_head()
            link = b'"chain": {"seq": %d, "prev": "%s"}}\n' % (self._next_seq,
                                                               self._last_hash.encode())
            # the entry's closing brace gives way to the link (one copy of the body, not two)
            line = b"".join((memoryview(body)[:-1], b", " if len(body) > 2 else b"", link))
            try:
                written = os.write(self._fd, line)
            except OSError as exc:
                self._cut_back(end, f"the ledger cannot be written: {exc.strerror or exc}")
            if written != len(line):
                self._cut_back(end, f"the ledger write was cut short ({written} of {len(line)} "
                                    "bytes): the disk is full or the file-size limit reached")
            self.problem = None
            self._next_seq += 1
            self._last_hash = hashlib.sha256(line).hexdigest()
            self._head_at = (st.st_ino, end + len(line))
            if end + len(line) >= self.rotate_bytes:
                self._rotate()

    def unwritable(self) -> str | None:
        """Why the ledger cannot take an entry now, or None. After a failed write this stays
        set until the file system has room again."""
        if self.problem is not None and self._has_room():
            self.problem = None
        return self.problem

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = -1
            if self._lock_fd >= 0:
                os.close(self._lock_fd)
                self._lock_fd = -1

    # -- inside the lock -----------------------------------------------------------------------

    def _locked(self) -> _FileLock:
        return _FileLock(self._lock, self._lock_fd)

    def _open(self) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        st = os.fstat(fd)
        if st.st_mode & 0o077 and st.st_uid == os.getuid():  # written before it was kept private
            os.fchmod(fd, 0o600)
        return fd

    def _drop_partial_tail(self) -> None:
        """A line left unfinished is removed: the next entry must start on a line of its own.
        SIGKILL can cut a write of more than a page at a page boundary, and so can a crash on a
        foreign file system."""
        size = os.fstat(self._fd).st_size
        if size == 0 or os.pread(self._fd, 1, size - 1) == b"\n":
            return
        start = max(0, size - 1024 * 1024)
        tail = os.pread(self._fd, size - start, start)
        os.ftruncate(self._fd, start + tail.rfind(b"\n") + 1 if b"\n" in tail else start)

    def _cut_back(self, end: int, problem: str) -> None:
        try:
            os.ftruncate(self._fd, end)
        except OSError:
            pass  # ftruncate to a smaller size frees space; it does not fail for want of it
        self.problem = problem
        raise LedgerUnwritable(problem)

    def _follow_rotation(self) -> os.stat_result:
        """Another process rotated the file: write to the new live file. Returns its fstat."""
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            current = None
        mine = os.fstat(self._fd)
        if current is None or (current.st_ino, current.st_dev) != (mine.st_ino, mine.st_dev):
            os.close(self._fd)
            self._fd = self._open()
            mine = os.fstat(self._fd)
        return mine

    def _rotate(self) -> None:
        numbers = [n for n, _ in archives(self.path)]
        os.rename(self.path, self.path.with_name(f"{self.path.stem}.{max(numbers, default=0) + 1}"
                                                 f"{self.path.suffix}"))
        os.close(self._fd)
        self._fd = self._open()
        self._head_at = (os.fstat(self._fd).st_ino, 0)

    def _load_head(self) -> None:
        """The chain's head from the files: the last whole line of the live file, or of the
        newest rotated file when the live one is empty."""
        last = _last_line_fd(self._fd)
        if last is None:
            for _, older in reversed(archives(self.path)):
                last = last_line(older)
                if last is not None:
                    break
        if last is None:
            self._next_seq, self._last_hash = 1, GENESIS
        else:
            match = CHAIN_TAIL.search(last)
            self._next_seq = int(match[1]) + 1 if match else 1
            self._last_hash = hashlib.sha256(last).hexdigest()
        st = os.fstat(self._fd)
        self._head_at = (st.st_ino, st.st_size)

    def head(self) -> tuple[int, str]:
        """The number and sha256 of the last line this process wrote or read as the head (0 and
        GENESIS before any), kept in memory: a walk of the files must not end before it."""
        with self._lock:
            return self._next_seq - 1, self._last_hash

    def _has_room(self) -> bool:
        try:
            fs = os.fstatvfs(self._fd)
            size = os.fstat(self._fd).st_size
        except OSError:
            return False
        soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
        under_limit = soft == resource.RLIM_INFINITY or size + ROOM_NEEDED <= soft
        return fs.f_bavail * fs.f_frsize >= ROOM_NEEDED and under_limit


class _FileLock:
    """The thread lock, then an flock on the ledger's lock file."""

    def __init__(self, lock: threading.Lock, fd: int) -> None:
        self._lock, self._fd = lock, fd

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._lock.release()


def _last_line_fd(fd: int) -> bytes | None:
    """The last whole line of an open file (newline included), or None when it has none."""
    size = os.fstat(fd).st_size
    step = 4096
    while True:
        start = max(0, size - step)
        tail = os.pread(fd, size - start, start)
        cut = tail.rfind(b"\n", 0, len(tail) - 1)
        if cut >= 0 or start == 0:
            line = tail[cut + 1:]
            return line if line.endswith(b"\n") else None
        step *= 4


def last_line(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        return _last_line_fd(fd)
    finally:
        os.close(fd)


def archives(path: Path) -> list[tuple[int, Path]]:
    """The rotated files of the ledger at `path`, oldest first, with their numbers."""
    found = []
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return []
    for name in names:
        match = ARCHIVE.match(name)
        if match and match["stem"] == path.stem and path.suffix == ".jsonl":
            found.append((int(match["number"]), path.with_name(name)))
    return sorted(found)


def segments(path: Path) -> list[Path]:
    """Every file of the ledger, oldest first: the rotated ones, then the live one."""
    return [p for _, p in archives(path)] + [path]


def read_ledger(path: Path, rotated: bool = False) -> Iterator[dict[str, Any]]:
    """Entries oldest first (with `rotated`, those of the rotated files first); a damaged line
    (a crash mid-write on a foreign file system) is skipped."""
    for part in segments(path) if rotated else [path]:
        yield from _read_file(part)


def _read_file(path: Path) -> Iterator[dict[str, Any]]:
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
            if isinstance(entry, dict) and entry.get("phase") != "intent":  # see Engine._record_intent
                yield entry
