"""One writer at a time per store, across threads (RLock) and processes (flock on a lock file)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import CheckpointError

WAIT_SECONDS = 60.0


class StoreLock:
    """Re-entrant within a thread, so a restore can take its own safety checkpoint."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._thread_lock = threading.RLock()
        self._fd = -1  # kept open between holds: one open() less on every checkpoint
        self._depth = 0

    @contextmanager
    def hold(self, *, exclusive: bool = True) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self._acquire(exclusive)
            with self._counted():
                yield

    @contextmanager
    def hold_if_free(self) -> Iterator[bool]:
        """An exclusive hold only if nobody has the store now; yields whether it is held. For a
        stop, which must not wait on a call under way or on another process."""
        if not self._thread_lock.acquire(blocking=False):
            yield False
            return
        try:
            if self._depth == 0 and not self._try_acquire():
                yield False
                return
            with self._counted():
                yield True
        finally:
            self._thread_lock.release()

    @contextmanager
    def _counted(self) -> Iterator[None]:
        """One more hold by this thread, which has the flock; the last one out unlocks it."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _try_acquire(self, exclusive: bool = True) -> bool:
        if self._fd < 0:
            self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self._fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _acquire(self, exclusive: bool) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while not self._try_acquire(exclusive):
            if time.monotonic() > deadline:
                raise CheckpointError(f"checkpoint store {self._path.parent} is busy "
                                      f"(another intentd process holds it)")
            time.sleep(0.01)

    def close(self) -> None:
        with self._thread_lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
