"""The store's manifest: checkpoints and per-path entries in SQLite, written in one transaction each."""

from __future__ import annotations

import bisect
import errno
import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from intentd.daemon.utils.statedir import keep_sqlite_private

from .errors import CheckpointError, CorruptStore, DiskFull, UnknownCheckpoint
from .inbox import Row as InboxRow
from .known import Known, from_rows
from .state import Entry

SCHEMA_VERSION = "1"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoints (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, created_ns INTEGER NOT NULL, clock_ns INTEGER NOT NULL,
    label TEXT NOT NULL, kind TEXT NOT NULL, complete INTEGER NOT NULL,
    files TEXT NOT NULL, skipped TEXT NOT NULL, coverage TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS entries (
    path TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, sha TEXT NOT NULL,
    perm INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, note TEXT NOT NULL,
    ino INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (path, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_by_seq ON entries (seq);
CREATE INDEX IF NOT EXISTS entries_by_sha ON entries (sha) WHERE sha != '';
CREATE TABLE IF NOT EXISTS inbox (sha TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS kept_last (seq INTEGER PRIMARY KEY);
"""
_ENTRY_COLUMNS = "kind, sha, perm, size, mtime_ns, note, ino"
_ROW_COLUMNS = "seq, created_ns, clock_ns, label, kind, complete, files, skipped, coverage"
_BRIEF_COLUMNS = "seq, created_ns, clock_ns, label, kind, complete, '[]', '[]', coverage"
_CHUNK = 500
# A pruned checkpoint held a path's first entry: what came before it is not known.
NO_STATE_BEFORE = "no state known: the checkpoint after it that saved it was pruned"
# What one entry row costs the manifest, roughly, for the store's size estimate.
ENTRY_ROW_BYTES = 100


class _Unknown:
    """Not read yet (None is a real answer: no checkpoint)."""


UNKNOWN = _Unknown()


@dataclass
class Holdings:
    """What the live blobs are kept for, as content bytes by sha: current, the blobs some
    path's latest entry holds (what the newest state needs, each blob once: hard links add
    nothing); older, every other live blob. superseded: each saved version that a later,
    different one of its path replaced, as (the checkpoint that saved it, the one that replaced
    it, its bytes): the checkpoints from the first up to the second need it."""

    current: dict[str, int] = field(default_factory=dict)
    older: dict[str, int] = field(default_factory=dict)
    superseded: list[tuple[int, int, int]] = field(default_factory=list)

    def size(self, sha: str) -> int:
        return self.current.get(sha) or self.older.get(sha, 0)


@dataclass(frozen=True)
class Row:
    """A checkpoint as stored. clock_ns is the file-system clock at creation, for ctime comparisons."""

    seq: int
    created_ns: int
    clock_ns: int
    label: str
    kind: str
    complete: bool
    files: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    coverage: str = ""


@dataclass
class Draft:
    """Everything one new checkpoint writes: its row, its entries, absences learnt about the past."""

    label: str
    kind: str
    complete: bool
    created_ns: int
    clock_ns: int
    files: list[str]
    skipped: list[tuple[str, str]]
    entries: dict[str, Entry]
    backfill: list[str]  # paths now known to have been absent since the run_start checkpoint
    stat_refresh: list[tuple[str, int, int, int, int]]  # (path, seq, size, mtime_ns, ino) of unchanged files
    bytes_added: int
    meta: dict[str, str]
    first_seen: list[tuple[str, int]] = field(default_factory=list)  # (path, ctime_ns), see commit
    coverage: str = ""
    inbox: list[InboxRow] = field(default_factory=list)  # new blobs kept here, not in git (inbox.py)


def _entry(row: tuple[object, ...]) -> Entry:
    kind, sha, perm, size, mtime_ns, note, ino = row
    return Entry(str(kind), str(sha), int(str(perm)), int(str(size)), int(str(mtime_ns)),  # type: ignore[arg-type]
                 str(note), int(str(ino)))


def _sql_error(exc: sqlite3.Error, path: Path) -> Exception:
    """The CheckpointError a person can act on for an SQLite failure."""
    text = str(exc)
    if "full" in text:
        return DiskFull(f"no space left on device while writing {path}; nothing was recorded")
    if isinstance(exc, sqlite3.OperationalError):  # locked, read-only, I/O: not corruption
        return CheckpointError(f"cannot use checkpoint manifest {path}: {text}")
    return CorruptStore(f"checkpoint manifest {path} is unreadable ({text}); move the folder "
                        f"{path.parent} aside to start a new store")


class Manifest:
    """SQLite access; every method raises CheckpointError subclasses, never sqlite3 errors."""

    def __init__(self, path: Path, workspace: str) -> None:
        self.path = path
        self.committed_generation = -1  # the generation the last write of this process made
        # the inbox's rows and bytes, counted by this process (upkeep's cue to move them to git)
        self.inbox_rows, self.inbox_bytes = 0, 0
        self.store_bytes = 0  # the estimate this process last read or wrote (upkeep's cue to prune)
        # The meta values and the newest row as this connection last read or wrote them, valid
        # while SQLite's data_version says no other connection committed since: every
        # checkpoint reads both, and two queries were a tenth of a single-file checkpoint.
        self._seen_version = -1
        self._meta_seen: dict[str, str] | None = None
        self._last_seen: Row | None | _Unknown = UNKNOWN
        try:
            keep_sqlite_private(path)
        except OSError as exc:
            raise CheckpointError(f"cannot use checkpoint manifest {path}: {exc.strerror}") from exc
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # The write-ahead log is folded into the database (with two fsyncs) every 4096 pages,
            # about 500 single-file checkpoints: at 256, that was half of a commit's cost. Its
            # 16 MiB count against the storage cap.
            self._db.execute("PRAGMA journal_size_limit=16777216")
            self._db.execute("PRAGMA wal_autocheckpoint=4096")
            self._db.executescript(_SCHEMA)
            self._add_columns()
        except sqlite3.Error as exc:
            raise _sql_error(exc, path) from exc
        self._check_identity(workspace)
        self._count_inbox()

    def _add_columns(self) -> None:
        """Stores made before checkpoints said how they found changes lack that column, and
        those made before entries kept inode numbers lack that one (0: not known, so the stat
        cache of such an entry vouches for nothing and its file is read once more)."""
        columns = {str(r[1]) for r in self._db.execute("PRAGMA table_info(checkpoints)")}
        if "coverage" not in columns:
            self._db.execute("ALTER TABLE checkpoints ADD COLUMN coverage TEXT NOT NULL DEFAULT ''")
        columns = {str(r[1]) for r in self._db.execute("PRAGMA table_info(entries)")}
        if "ino" not in columns:
            self._db.execute("ALTER TABLE entries ADD COLUMN ino INTEGER NOT NULL DEFAULT 0")

    def _check_identity(self, workspace: str) -> None:
        meta = self.meta()
        self.store_bytes = int(meta.get("store_bytes", "0"))
        if not meta:
            with self.transaction():
                self._set_meta({"schema": SCHEMA_VERSION, "workspace": workspace, "generation": "0"})
            return
        if meta.get("schema") != SCHEMA_VERSION or "workspace" not in meta:
            raise CorruptStore(f"checkpoint manifest {self.path} has an unknown format")
        if meta["workspace"] != workspace:
            raise CorruptStore(f"checkpoint store {self.path.parent} belongs to {meta['workspace']}, "
                               f"not {workspace}")

    def close(self) -> None:
        self._db.close()

    def used_bytes(self) -> int:
        """The database's pages in use (its write-ahead log's changes included, free pages not)."""
        (pages,), (free,), (size,) = (self._query(f"PRAGMA {name}")[0] for name in (
            "page_count", "freelist_count", "page_size"))
        return (int(str(pages)) - int(str(free))) * int(str(size))

    def flush(self) -> None:
        """Fold the write-ahead log into the database file (so its size says what is stored)."""
        self._query("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; on any error nothing of it is kept. What was read inside it
        is not remembered: it may be rolled back."""
        self._forget_seen()
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:  # SQLite rolls back itself on a full disk
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise _sql_error(exc, self.path) from exc
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise DiskFull(f"no space left on device while writing {self.path}") from exc
            raise
        finally:
            self._forget_seen()

    def _query(self, sql: str, params: Iterable[object] = ()) -> list[tuple[object, ...]]:
        try:
            return self._db.execute(sql, tuple(params)).fetchall()
        except sqlite3.Error as exc:
            raise _sql_error(exc, self.path) from exc

    def meta(self) -> dict[str, str]:
        return self.head()[0]

    def head(self) -> tuple[dict[str, str], Row | None]:
        """The meta values and the newest checkpoint (brief: its files and skipped left empty)."""
        if (not self._still_seen() or self._meta_seen is None
                or isinstance(self._last_seen, _Unknown)):
            self._meta_seen = {str(k): str(v) for k, v in self._query("SELECT key, value FROM meta")}
            found = self.rows("WHERE seq = (SELECT MAX(seq) FROM checkpoints)", brief=True)
            self._last_seen = found[0] if found else None
        return dict(self._meta_seen), self._last_seen

    def _data_version(self) -> int:
        """A number that changes when another connection (any process) commits."""
        return int(str(self._query("PRAGMA data_version")[0][0]))

    def _still_seen(self) -> bool:
        """Whether what this connection last saw is still so; if not, it is forgotten and
        what is read next is remembered against the version now."""
        version = self._data_version()
        if version == self._seen_version:
            return True
        self._forget_seen()
        self._seen_version = version
        return False

    def _forget_seen(self) -> None:
        self._meta_seen, self._last_seen = None, UNKNOWN

    def _set_meta(self, values: dict[str, str]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    def rows(self, where: str = "", params: Iterable[object] = (), *, brief: bool = False) -> list[Row]:
        """brief: leave files and skipped empty (a baseline's list names every file: 30 MB of
        Python objects at 500k files, for a caller that wants only the row's seq and times)."""
        columns = _BRIEF_COLUMNS if brief else _ROW_COLUMNS
        sql = f"SELECT {columns} FROM checkpoints {where} ORDER BY seq"
        try:
            return [self._row(r) for r in self._query(sql, params)]
        except (ValueError, TypeError) as exc:
            raise CorruptStore(f"checkpoint manifest {self.path} has a damaged row: {exc}") from exc

    @staticmethod
    def _row(r: tuple[object, ...]) -> Row:
        seq, created, clock, label, kind, complete, files, skipped, coverage = r
        return Row(int(str(seq)), int(str(created)), int(str(clock)), str(label), str(kind),
                   bool(complete), tuple(json.loads(str(files))),
                   tuple((str(p), str(w)) for p, w in json.loads(str(skipped))), str(coverage))

    def row(self, seq: int, name: str) -> Row:
        found = self.rows("WHERE seq = ?", (seq,))
        if not found:
            raise UnknownCheckpoint(f"no checkpoint {name} (never created, or pruned to stay "
                                    "under the storage cap); see `intentd checkpoints list`")
        return found[0]

    def last(self) -> Row | None:
        """The newest checkpoint, brief (its files and skipped left empty)."""
        return self.head()[1]

    def last_whole_clock(self) -> int | None:
        """The file-time clock of the newest checkpoint that covered the whole workspace (its
        row is complete); None when none did."""
        found = self._query("SELECT clock_ns FROM checkpoints WHERE complete = 1 "
                            "ORDER BY seq DESC LIMIT 1")
        return int(str(found[0][0])) if found else None

    def skipped_until(self, seq: int) -> set[str]:
        """Every path the checkpoints up to `seq` listed as skipped; their file lists are not
        read (a baseline's names every file)."""
        try:
            return {str(path) for (text,) in self._query(
                "SELECT skipped FROM checkpoints WHERE seq <= ?", (seq,))
                for path, _why in json.loads(str(text))}
        except (ValueError, TypeError) as exc:
            raise CorruptStore(f"checkpoint manifest {self.path} has a damaged row: {exc}") from exc

    def next_seq(self, seq: int) -> int | None:
        rows = self._query("SELECT MIN(seq) FROM checkpoints WHERE seq > ?", (seq,))
        return int(str(rows[0][0])) if rows and rows[0][0] is not None else None

    def known(self) -> Known:
        """The latest entry of every path ever recorded: the store's view of the workspace, packed
        as the rows come (never a list of them all)."""
        sql = f"SELECT path, MAX(seq), {_ENTRY_COLUMNS} FROM entries GROUP BY path"
        try:
            return from_rows(self._db.execute(sql))
        except sqlite3.Error as exc:
            raise _sql_error(exc, self.path) from exc
        except (ValueError, TypeError, OverflowError) as exc:
            raise CorruptStore(f"checkpoint manifest {self.path} has a damaged entry: {exc}") from exc

    def changed_after(self, seq: int, upto: int | None = None) -> list[str]:
        """Paths with an entry in (seq, upto]: the only ones whose state can differ from seq's."""
        sql = "SELECT DISTINCT path FROM entries WHERE seq > ? AND seq <= ?"
        return [str(r[0]) for r in self._query(sql, (seq, upto if upto is not None else 2**62))]

    def states_at(self, seq: int, paths: Iterable[str]) -> dict[str, Entry]:
        """The entry in force at checkpoint seq for each path that has one (unknown paths left out)."""
        found: dict[str, Entry] = {}
        batch = list(paths)
        for start in range(0, len(batch), _CHUNK):
            chunk = batch[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = (f"SELECT path, MAX(seq), {_ENTRY_COLUMNS} FROM entries "
                   f"WHERE seq <= ? AND path IN ({marks}) GROUP BY path")
            found.update((str(r[0]), _entry(r[2:])) for r in self._query(sql, (seq, *chunk)))
        return found

    def first_after(self, seq: int, paths: Iterable[str]) -> dict[str, Entry]:
        """The earliest entry after checkpoint seq of each path that has one."""
        found: dict[str, Entry] = {}
        batch = list(paths)
        columns = ", ".join(f"e.{c.strip()}" for c in _ENTRY_COLUMNS.split(","))
        for start in range(0, len(batch), _CHUNK):
            chunk = batch[start:start + _CHUNK]
            sql = (f"SELECT e.path, {columns} FROM entries e JOIN (SELECT path, MIN(seq) AS s "
                   f"FROM entries WHERE seq > ? AND path IN ({','.join('?' * len(chunk))}) "
                   "GROUP BY path) f ON e.path = f.path AND e.seq = f.s")
            found.update((str(r[0]), _entry(r[1:])) for r in self._query(sql, (seq, *chunk)))
        return found

    def holds(self, seq: int, prefix: str) -> bool:
        """Whether checkpoint seq knows anything at path prefix (the file itself or inside the folder)."""
        sql = "SELECT 1 FROM entries WHERE seq <= ? AND (path = ? OR (path > ? AND path < ?)) LIMIT 1"
        return bool(self._query(sql, (seq, prefix, prefix + "/", prefix + "0")))

    def commit(self, draft: Draft, run_start: int | None, meta: dict[str, str] | None = None) -> int:
        """Write the draft as a new checkpoint and bump the generation; returns its seq.

        run_start is the first checkpoint of the complete run this one continues (backfilled
        absences go there), or None: then a complete checkpoint starts a new run. `meta` is the
        meta values as the caller read them under the store's lock (spares reading them again).
        """
        with self.transaction() as db:
            files, skipped = json.dumps(draft.files), json.dumps(draft.skipped)
            cur = db.execute(
                "INSERT INTO checkpoints (created_ns, clock_ns, label, kind, complete, files, skipped,"
                " coverage) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (draft.created_ns, draft.clock_ns, draft.label, draft.kind, int(draft.complete),
                 files, skipped, draft.coverage))
            seq = int(cur.lastrowid or 0)
            db.executemany(
                f"INSERT INTO entries (path, seq, {_ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ((p, seq, *e) for p, e in draft.entries.items()))  # a generator: no list of them all
            if draft.backfill and run_start is not None:
                db.executemany(
                    f"INSERT OR IGNORE INTO entries (path, seq, {_ENTRY_COLUMNS})"
                    " VALUES (?, ?, 'absent', '', 0, -1, -1, '', 0)",
                    ((p, run_start) for p in draft.backfill))
            if draft.inbox:
                db.executemany("INSERT OR IGNORE INTO inbox (sha, data) VALUES (?, ?)", draft.inbox)
            self._backfill_present(db, seq, draft)
            if draft.stat_refresh:
                db.executemany(
                    "UPDATE entries SET size = ?, mtime_ns = ?, ino = ? WHERE path = ? AND seq = ?",
                    ((size, mtime, ino, p, s) for p, s, size, mtime, ino in draft.stat_refresh))
            start = run_start if run_start is not None else (seq if draft.complete else None)
            # the rows count too: names listed again and again in `skipped` grew the manifest
            # past the cap, and only blob bytes were counted towards a prune
            rows = len(files) + len(skipped) + len(draft.label) + ENTRY_ROW_BYTES * len(draft.entries)
            written = self._bump(draft.bytes_added + rows, {**draft.meta, "run_start": str(start or "")},
                                 meta)
        # what this connection wrote is what the next checkpoint would read back
        self._meta_seen = written
        self._last_seen = Row(seq, draft.created_ns, draft.clock_ns, draft.label, draft.kind,
                              draft.complete, (), (), draft.coverage)
        self.inbox_rows += len(draft.inbox)
        self.inbox_bytes += sum(len(data) for _sha, data in draft.inbox)
        return seq

    @staticmethod
    def _backfill_present(db: sqlite3.Connection, seq: int, draft: Draft) -> None:
        """A file seen for the first time whose ctime is older than an earlier checkpoint has not
        changed since before it: record its state at the earliest such checkpoint as well, so
        restoring that one brings it back rather than leaving it as it is now."""
        if not draft.first_seen:
            return
        rows = db.execute("SELECT seq, clock_ns FROM checkpoints WHERE seq < ? ORDER BY seq",
                          (seq,)).fetchall()
        if not rows:
            return
        # the clock may step back: a checkpoint qualifies only if every later one is after ctime too
        floor = [0] * len(rows)
        low = 2**63
        for i in range(len(rows) - 1, -1, -1):
            low = min(low, int(rows[i][1]))
            floor[i] = low
        backfill = []
        for path, ctime in draft.first_seen:
            at = bisect.bisect_right(floor, ctime)
            entry = draft.entries.get(path)
            if at < len(rows) and entry is not None:
                backfill.append((path, int(rows[at][0]), *entry))
        db.executemany(f"INSERT OR IGNORE INTO entries (path, seq, {_ENTRY_COLUMNS}) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", backfill)

    def _bump(self, bytes_added: int, meta: dict[str, str],
              current: dict[str, str] | None = None) -> dict[str, str]:
        """Inside a transaction: new generation, store size, and meta values; returns the meta
        values as they are now."""
        current = current if current is not None else self.meta()
        values = {"store_bytes": str(int(current.get("store_bytes", "0")) + bytes_added), **meta}
        values["generation"] = str(int(current.get("generation", "0")) + 1)
        self._set_meta(values)
        self.committed_generation = int(values["generation"])
        self.store_bytes = int(values["store_bytes"])
        return {**current, **values}

    def set_meta(self, values: dict[str, str]) -> None:
        """Store meta values; no entry changes, so the generation stays (nobody reloads)."""
        with self.transaction():
            self._set_meta(values)
        if "store_bytes" in values:
            self.store_bytes = int(values["store_bytes"])

    def drop(self, seq: int) -> tuple[list[str], int]:
        """Prune checkpoint seq (never the newest), folding its entries that the next checkpoint
        does not replace into that one: every other checkpoint's state stays as it was.
        Returns the blob shas no entry references any more (those in the inbox are deleted
        here), and how many of them were in the inbox."""
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM checkpoints WHERE seq = ?", (seq,)).fetchone() is None:
                raise UnknownCheckpoint(f"no checkpoint {seq} to prune")
            (following,) = db.execute(
                "SELECT MIN(seq) FROM checkpoints WHERE seq > ?", (seq,)).fetchone()
            if following is None:
                raise CheckpointError("the newest checkpoint is never pruned")
            dropped = {str(r[0]) for r in db.execute(
                "SELECT DISTINCT sha FROM entries WHERE seq = ? AND sha != ''", (seq,))}
            self._keep_first_entries(db, seq, following)
            db.execute("UPDATE OR IGNORE entries SET seq = ? WHERE seq = ?", (following, seq))
            db.execute("DELETE FROM entries WHERE seq = ?", (seq,))
            db.execute("DELETE FROM checkpoints WHERE seq = ?", (seq,))
            db.execute("DELETE FROM kept_last WHERE seq = ?", (seq,))
            dead = [sha for sha in dropped if db.execute(
                "SELECT 1 FROM entries WHERE sha = ? LIMIT 1", (sha,)).fetchone() is None]
            freed = sum(db.execute("DELETE FROM inbox WHERE sha = ?", (sha,)).rowcount
                        for sha in dead)
            run_start = self.meta().get("run_start", "")
            # the run's absences were folded forward with the rest of its entries
            moved = {"run_start": str(following)} if run_start and int(run_start) == seq else {}
            self._bump(0, moved)
        if freed:
            self._count_inbox()
        return dead, freed

    @staticmethod
    def _keep_first_entries(db: sqlite3.Connection, seq: int, following: int) -> None:
        """Before checkpoint seq is dropped: what its entries that are a path's first, and that
        the next checkpoint replaces (so they go), told a restore of an earlier checkpoint. An
        absent one (a file a tool made) said the path was absent then too: it goes to the
        checkpoint before. Any other let the restore infer the state then from the ctime, or
        name the path as having none: a "no state" entry at the checkpoint before keeps that,
        or the next entry, absent say, would become the first and have the file deleted."""
        (before,) = db.execute("SELECT MAX(seq) FROM checkpoints WHERE seq < ?", (seq,)).fetchone()
        if before is None:
            return  # no earlier checkpoint to restore
        firsts = db.execute(
            "SELECT path, kind FROM entries e WHERE e.seq = ?"
            " AND EXISTS (SELECT 1 FROM entries f WHERE f.path = e.path AND f.seq = ?)"
            " AND NOT EXISTS (SELECT 1 FROM entries g WHERE g.path = e.path AND g.seq < ?)",
            (seq, following, seq)).fetchall()
        db.executemany("UPDATE entries SET seq = ? WHERE path = ? AND seq = ?",
                       ((before, path, seq) for path, kind in firsts if kind == "absent"))
        db.executemany(f"INSERT INTO entries (path, seq, {_ENTRY_COLUMNS})"
                       " VALUES (?, ?, 'skipped', '', 0, -1, -1, ?, 0)",
                       ((path, before, NO_STATE_BEFORE) for path, kind in firsts
                        if kind != "absent"))

    def seqs(self) -> list[int]:
        return [int(str(r[0])) for r in self._query("SELECT seq FROM checkpoints ORDER BY seq")]

    def row_bytes(self, seq: int) -> int:
        """Roughly what checkpoint seq's rows take in the manifest (what dropping it frees there)."""
        found = self._query(
            "SELECT LENGTH(files) + LENGTH(skipped) + LENGTH(label) + LENGTH(coverage),"
            " (SELECT COUNT(*) FROM entries WHERE seq = ?) FROM checkpoints WHERE seq = ?",
            (seq, seq))
        if not found:
            return 0
        text, entries = found[0]
        return int(str(text or 0)) + ENTRY_ROW_BYTES * int(str(entries))

    def keep_last(self, seq: int) -> None:
        """Mark checkpoint seq as one pruning drops last (see upkeep.py)."""
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO kept_last (seq) VALUES (?)", (seq,))

    def kept_last(self) -> set[int]:
        return {int(str(r[0])) for r in self._query("SELECT seq FROM kept_last")}

    # -- the inbox (inbox.py) --------------------------------------------------------------

    def inbox_blob(self, sha: str) -> bytes | None:
        """A blob's compressed content from the inbox; None when it is not there."""
        found = self._query("SELECT data FROM inbox WHERE sha = ?", (sha,))
        return self._blob(found[0][0]) if found else None

    def inbox(self) -> list[InboxRow]:
        """Every blob in the inbox, oldest first."""
        return [(str(sha), self._blob(data))
                for sha, data in self._query("SELECT sha, data FROM inbox ORDER BY rowid")]

    def _blob(self, value: object) -> bytes:
        if not isinstance(value, bytes):
            raise CorruptStore(f"checkpoint manifest {self.path} has a damaged inbox row")
        return value

    def empty_inbox(self, shas: Iterable[str]) -> None:
        """Delete these blobs from the inbox: git holds them now."""
        with self.transaction() as db:
            db.executemany("DELETE FROM inbox WHERE sha = ?", ((sha,) for sha in shas))
        self._count_inbox()

    def _count_inbox(self) -> None:
        rows, size = self._query("SELECT COUNT(*), TOTAL(LENGTH(data)) FROM inbox")[0]
        self.inbox_rows, self.inbox_bytes = int(str(rows)), int(float(str(size)))

    def named(self, shas: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """(sha, a path it was saved for) of the given blobs still referenced, or of every live blob."""
        if shas is None:
            sql = "SELECT sha, MIN(path) FROM entries WHERE sha != '' GROUP BY sha"
            return [(str(r[0]), str(r[1])) for r in self._query(sql)]
        found: list[tuple[str, str]] = []
        batch = list(shas)
        for start in range(0, len(batch), _CHUNK):
            chunk = batch[start:start + _CHUNK]
            sql = (f"SELECT sha, MIN(path) FROM entries WHERE sha IN ({','.join('?' * len(chunk))}) "
                   "GROUP BY sha")
            found.extend((str(r[0]), str(r[1])) for r in self._query(sql, chunk))
        return found

    def holdings(self) -> Holdings:
        """What the store's blobs are kept for, read in one pass over the entries in their key's
        order (three GROUP BY queries took four times as long at 500k files)."""
        held = Holdings()
        path_now: str | None = None
        since, sha_now, size_now = 0, "", 0  # the path's version being read: saved at `since`
        try:  # row by row, not fetched whole: a list of every entry is 100 MB at 500k files
            for row in self._db.execute("SELECT path, seq, sha, size FROM entries ORDER BY path, seq"):
                path, seq, sha, size = str(row[0]), int(row[1]), str(row[2]), int(row[3])
                if path == path_now and sha == sha_now:
                    continue  # the same content saved again: the version goes on
                if path == path_now and sha_now:
                    held.superseded.append((since, seq, size_now))
                    if sha_now not in held.current:
                        held.older[sha_now] = max(size_now, held.older.get(sha_now, 0))
                elif path_now is not None and sha_now:
                    held.current[sha_now] = size_now
                    held.older.pop(sha_now, None)
                path_now, since, sha_now, size_now = path, seq, sha, size
        except sqlite3.Error as exc:
            raise _sql_error(exc, self.path) from exc
        if path_now is not None and sha_now:
            held.current[sha_now] = size_now
            held.older.pop(sha_now, None)
        return held

    def count(self) -> int:
        return int(str(self._query("SELECT COUNT(*) FROM checkpoints")[0][0]))
