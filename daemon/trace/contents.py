"""Contents of the files agents wrote, kept by sha256: what blame and the trace export diff.

Texts are rows of one SQLite database in the store's folder (texts_db.py). Stores written by
earlier versions kept one file per text, `<2 hex>/<62 hex>`: those are still read."""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import stat
import threading
import weakref
import zlib
from collections import OrderedDict
from pathlib import Path

from intentd.daemon.tools.fileio import sha256_file
from intentd.daemon.trace.texts_db import TextsDatabase
from intentd.daemon.utils.reading import read_fd

log = logging.getLogger(__name__)

MAX_KEPT_BYTES = 2 * 1024 * 1024  # larger files are hashed, not kept: no line-level trace for them
BINARY_PROBE = 8192
RECENT_BYTES = 16 * 1024 * 1024  # texts kept in memory: a call's "after" is the next's "before"
PENDING_BYTES = 32 * 1024 * 1024  # texts waiting for the writer; past this, put() writes itself
CLOSE_SECONDS = 2.0  # at a stop, how long the writer gets to write what waits (SIGTERM: ≤ 5 s)
# Once a text waits, the writer lets more gather this long (or LINGER_BYTES) before it writes them
# in one transaction: woken for every text, it cost each gated write a quarter of its CPU.
LINGER_SECONDS = 0.05
LINGER_BYTES = 1024 * 1024


class ContentStore:
    """Compressed file contents under their sha256 in one private folder; a stored text whose
    contents no longer match its digest reads as missing.

    With `background` (the daemon's stores), put() leaves the compressing and writing to a
    writer thread: a call's receipt does not wait for it. The writer lets texts gather for up to
    LINGER_SECONDS, then writes every text waiting in one transaction. Texts waiting to be
    written are read from memory meanwhile, and flush() and close() write every one of them
    at once."""

    def __init__(self, folder: Path, background: bool = False) -> None:
        self.folder = folder
        self._recent: OrderedDict[str, bytes] = OrderedDict()
        self._recent_bytes = 0
        self._lock = threading.Lock()
        self._texts = TextsDatabase(folder)
        self._background = background
        self._pending: OrderedDict[str, bytes] = OrderedDict()  # for the writer, oldest first
        self._pending_bytes = 0
        self._changed = threading.Condition(self._lock)
        self._writer: threading.Thread | None = None
        self._hurrying = 0  # flush() calls waiting: the writer writes now, without lingering

    def keep(self, path: str) -> str | None:
        """The sha256 of the file at `path` (None when it does not exist), its text kept."""
        try:
            # O_NONBLOCK: a FIFO put where a file was expected must not hang the call
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (IsADirectoryError, PermissionError):
            return sha256_file(path)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None  # as sha256_file: special files have no contents to keep
            if info.st_size > MAX_KEPT_BYTES:
                return sha256_file(path)
            data = read_fd(fd, info.st_size, MAX_KEPT_BYTES + 1)  # a buffer the file's size
        finally:
            os.close(fd)
        digest = hashlib.sha256(data).hexdigest()
        if len(data) <= MAX_KEPT_BYTES and b"\0" not in data[:BINARY_PROBE]:
            self.put(digest, data)
        return digest

    def put(self, digest: str, data: bytes) -> None:
        _check(digest)
        self._remember(digest, data)
        if digest in self._texts.known:
            return
        if self._background and self._hand_over(digest, data):
            return
        self._write([(digest, data)])

    def _hand_over(self, digest: str, data: bytes) -> bool:
        """Queue the text for the writer thread; False when the queue is full (the caller then
        writes it: memory stays bounded) or the store is closed."""
        with self._lock:
            if digest in self._pending:
                return True
            if self._pending_bytes + len(data) > PENDING_BYTES or not self._background:
                return False
            first = not self._pending
            self._pending[digest] = data
            self._pending_bytes += len(data)
            if self._writer is None:
                _WRITING.add(self)  # an exit without close() still writes what waits
                self._writer = threading.Thread(target=self._write_pending, daemon=True,
                                                name=f"contents {self.folder.parent.name}")
                self._writer.start()
            if first or self._pending_bytes >= LINGER_BYTES:
                self._changed.notify_all()  # not for every text: a wake costs the caller the GIL
        return True

    def _write_pending(self) -> None:
        while True:
            with self._lock:
                while not self._pending:
                    if not self._background:
                        return
                    self._changed.wait()
                self._changed.wait_for(self._write_now, LINGER_SECONDS)
                batch = list(self._pending.items())  # all that waits: one transaction
            try:
                self._write(batch)
            except Exception:  # the trace of these texts, never the writer
                log.exception("could not keep %d text(s)", len(batch))
            with self._lock:  # only now: until written, get() reads them from here
                for digest, data in batch:
                    del self._pending[digest]
                    self._pending_bytes -= len(data)
                self._changed.notify_all()

    def _write_now(self) -> bool:
        """Whether the writer should stop gathering texts (the lock is held)."""
        return bool(self._hurrying) or not self._background or self._pending_bytes >= LINGER_BYTES

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every text handed to the writer is written; False if `timeout` ran out."""
        with self._lock:
            self._hurrying += 1
            self._changed.notify_all()
            try:
                return self._changed.wait_for(lambda: not self._pending, timeout)
            finally:
                self._hurrying -= 1

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        """Write what is waiting, then end the writer; later puts write at once."""
        with self._lock:
            self._background = False
            self._changed.notify_all()
            writer = self._writer
        if writer is not None:
            writer.join(timeout)
        with self._lock:
            if self._pending:  # a disk that hangs: the stop goes on, and says what it lost
                log.error("%d kept text(s) could not be written to %s before the stop",
                          len(self._pending), self.folder)
                return
        if writer is None or not writer.is_alive():
            self._texts.close()  # later puts open it again

    def _write(self, texts: list[tuple[str, bytes]]) -> None:
        """Compressed, then written in one transaction; a full disk or a database error costs
        the trace of these texts (logged), never the call."""
        self._texts.add([(digest, zlib.compress(data, 1)) for digest, data in texts])

    def get(self, digest: str | None) -> bytes | None:
        """The contents stored under `digest`; b"" for None (a file that did not exist)."""
        if digest is None:
            return b""
        with self._lock:
            found = self._recent.get(digest) or self._pending.get(digest)
        if found is not None:
            return found
        try:
            _check(digest)
            packed = self._texts.read(digest)
            if packed is None:  # a text an earlier version kept in a file of its own
                packed = (self.folder / digest[:2] / digest[2:]).read_bytes()
            data = zlib.decompress(packed)
        except (OSError, zlib.error, ValueError):
            return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    def _remember(self, digest: str, data: bytes) -> None:
        """The texts just kept, in memory: the diff right after a write needs them again."""
        with self._lock:
            if digest in self._recent:
                self._recent.move_to_end(digest)
                return
            self._recent[digest] = data
            self._recent_bytes += len(data)
            while self._recent_bytes > RECENT_BYTES and len(self._recent) > 1:
                _, dropped = self._recent.popitem(last=False)
                self._recent_bytes -= len(dropped)


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _check(digest: str) -> None:
    """A digest names a text, and (in the old layout) a path: nothing else gets through. (One
    match, not a test per character: put() checks every text kept, twice per gated write.)"""
    if not _SHA256.fullmatch(digest):
        raise ValueError(f"not a sha256: {digest!r}")


_WRITING: weakref.WeakSet[ContentStore] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for store in list(_WRITING):
        store.close()
