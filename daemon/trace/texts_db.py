"""The kept texts' table: one SQLite file per contents folder, written a batch per transaction.

One file instead of one file per text: creating a file costs the kernel far more than a row in a
transaction, and the daemon keeps a text for nearly every write an agent makes."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from intentd.daemon.utils.statedir import ensure_private, keep_sqlite_private

log = logging.getLogger(__name__)

NAME = "texts.sqlite3"
KNOWN_DIGESTS = 65_536  # digests known to be stored, remembered so that a text is packed once
_SCHEMA = "CREATE TABLE IF NOT EXISTS texts (digest TEXT PRIMARY KEY, data BLOB NOT NULL)"
_SUFFIXES = ("", "-wal", "-shm")


class TextsDatabase:
    """Compressed texts by sha256 digest. Never raises for SQLite or disk trouble: a text that
    cannot be written costs its trace (logged), a text that cannot be read reads as missing.

    One connection shared under a lock: the writer thread and the readers of one process take
    turns; other processes use their own (WAL: readers see every committed batch)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / NAME
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._trouble: str | None = None  # the last failure logged: a full disk logs once
        self.known: set[str] = set()  # digests written or found here: put() skips them

    def add(self, rows: Sequence[tuple[str, bytes]]) -> bool:
        """Store (digest, compressed text) rows in one transaction; False if none could be."""
        with self._lock:
            try:
                try:
                    self._insert(rows)
                except sqlite3.DatabaseError as exc:
                    if not _damaged(exc):
                        raise
                    self._move_aside(exc)
                    self._insert(rows)  # into the new database
            except (sqlite3.Error, OSError) as exc:
                self._report(f"could not keep {len(rows)} text(s) in {self.path}", exc)
                return False
            if self._trouble is not None:
                log.info("kept texts are written to %s again", self.path)
                self._trouble = None
            if len(self.known) + len(rows) > KNOWN_DIGESTS:
                self.known.clear()  # a bound on memory; a forgotten digest is packed once more
            self.known.update(digest for digest, _ in rows)
        return True

    def read(self, digest: str) -> bytes | None:
        """The compressed text stored under `digest`, None if there is none (or no database)."""
        with self._lock:
            try:
                db = self._connection(create=False)
                if db is None:
                    return None
                row = db.execute("SELECT data FROM texts WHERE digest = ?", (digest,)).fetchone()
            except sqlite3.Error as exc:
                if _damaged(exc):
                    self._drop()  # the next write finds it again, and moves it aside
                self._report(f"could not read kept texts from {self.path}", exc)
                return None
        return bytes(row[0]) if row is not None else None

    def close(self) -> None:
        """End the connection (its WAL is folded in); the next use opens it again."""
        with self._lock:
            self._drop()

    def _insert(self, rows: Sequence[tuple[str, bytes]]) -> None:
        db = self._connection(create=True)
        assert db is not None
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("INSERT OR IGNORE INTO texts (digest, data) VALUES (?, ?)", rows)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    def _connection(self, create: bool) -> sqlite3.Connection | None:
        """The open connection; a reader (`create` False) makes no folder and no database."""
        if self._db is not None:
            return self._db
        if create:
            ensure_private(self.folder)
            keep_sqlite_private(self.path)
        elif not self.path.exists():
            return None
        self._db = _open(self.path)
        return self._db

    def _move_aside(self, exc: sqlite3.Error) -> None:
        """A damaged database: kept for a person to look at, a new one started in its place."""
        self._drop()
        aside = f"{self.path}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}.damaged"
        for suffix in _SUFFIXES:
            with contextlib.suppress(FileNotFoundError):
                if suffix == "-shm":
                    os.unlink(f"{self.path}{suffix}")  # an index of the WAL, nothing of its own
                else:
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        self.known.clear()
        log.error("the kept texts' database %s is damaged (%s): moved to %s, a new one started; "
                  "blame cannot show the lines of the texts it held", self.path, exc, aside)
        keep_sqlite_private(self.path)

    def _drop(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def _report(self, what: str, exc: BaseException) -> None:
        message = f"{what}: {exc}"
        if message != self._trouble:  # the same failure again (a full disk) is not news
            log.warning("%s", message)
            self._trouble = message


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True, timeout=2.0,
                         isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last batches, never corrupt
        db.execute("PRAGMA journal_size_limit=16777216")  # a big batch leaves no big WAL behind
        db.execute(_SCHEMA)
    except BaseException:
        db.close()
        raise
    return db


def _damaged(exc: sqlite3.Error) -> bool:
    """Not a database, or a damaged one (as opposed to a full disk, a lock, a permission)."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
