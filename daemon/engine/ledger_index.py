"""The ledger's query index: SQLite rows that point at ledger lines, so a query costs what it returns.

The ledger files stay the record; the index only says where each line is (file number, offset,
length) and what a query filters on (time, session, intent, tool, decision). It catches up with
lines written since the last query before it answers, and is rebuilt from the files whenever it
does not match them (deleted, damaged, or a ledger replaced by another).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from intentd.daemon.engine.ledger import archives

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY, segment INTEGER NOT NULL, offset INTEGER NOT NULL,
    length INTEGER NOT NULL, time REAL NOT NULL, session TEXT, intent_id TEXT, tool TEXT,
    decision TEXT);
CREATE INDEX IF NOT EXISTS by_time ON entries (time, seq);
CREATE INDEX IF NOT EXISTS by_session ON entries (session, time, seq);
CREATE INDEX IF NOT EXISTS by_intent ON entries (intent_id, time, seq);
CREATE INDEX IF NOT EXISTS by_tool ON entries (tool, time, seq);
CREATE TABLE IF NOT EXISTS progress (segment INTEGER NOT NULL, offset INTEGER NOT NULL);
"""
CHUNK = 4 * 1024 * 1024
MAX_LIMIT = 10_000
ENTRY_START = '{"v": 1, "intent": '  # how the engine's entries begin (json.dumps, keys in order)
DECISION_KEY = ', "decision": '
_DECODER = json.JSONDecoder()
FILTERS = {"session_id": "session", "intent_id": "intent_id", "tool": "tool",
           "decision": "decision"}


class BadQuery(ValueError):
    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param, self.message = param, message


@dataclass(frozen=True)
class LedgerQuery:
    """What to return: the newest `limit` entries that pass every filter given, older than
    `before` (a cursor from an earlier page) and within [since, until) in epoch seconds."""

    limit: int = 100
    session_id: str | None = None
    intent_id: str | None = None
    tool: str | None = None
    decision: str | None = None
    since: float | None = None
    until: float | None = None
    before: str | None = None

    @classmethod
    def from_params(cls, raw: dict[str, Any]) -> LedgerQuery:
        """From `ledger/query` params (untrusted); raises BadQuery naming the bad one."""
        limit = raw.get("limit", 100)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= MAX_LIMIT:
            raise BadQuery("limit", f"must be a whole number from 1 to {MAX_LIMIT}")
        texts = {}
        for name in (*FILTERS, "before"):
            value = raw.get(name)
            if value is not None and not isinstance(value, str):
                raise BadQuery(name, "must be a string")
            texts[name] = value
        if texts["before"] is not None:
            try:
                parse_cursor(texts["before"])
            except ValueError:
                raise BadQuery("before", "must be the `older` cursor of an earlier page") from None
        times = {}
        for name in ("since", "until"):
            value = raw.get(name)
            times[name] = None if value is None else parse_time(value)
            if value is not None and times[name] is None:
                raise BadQuery(name, "must be an ISO 8601 time or epoch seconds")
        return cls(limit, texts["session_id"], texts["intent_id"], texts["tool"],
                   texts["decision"], times["since"], times["until"], texts["before"])


@dataclass(frozen=True)
class LedgerPage:
    entries: list[dict[str, Any]]  # oldest first
    older: str | None  # the cursor for the page before this one; None when there is none


class LedgerIndex:
    """One per ledger file; safe to share between threads."""

    def __init__(self, ledger_path: Path) -> None:
        self.ledger_path = ledger_path
        self.db_path = ledger_path.with_name(ledger_path.stem + ".index.sqlite")
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def query(self, query: LedgerQuery) -> LedgerPage:
        where, params = _where(query)
        try:
            rows = self._select(where, params, query.limit + 1)
        except sqlite3.DatabaseError:  # a damaged index was discarded: build it again
            rows = self._select(where, params, query.limit + 1)
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        entries = self._read(rows)
        older = f"{rows[-1][4]!r}/{rows[-1][0]}" if more and rows else None
        return LedgerPage(entries[::-1], older)

    def _select(self, where: str, params: list[Any], limit: int) -> list[Any]:
        with self._lock, self._connect() as db:
            self._catch_up(db)
            rows: list[Any] = db.execute(
                f"SELECT seq, segment, offset, length, time FROM entries {where} "
                "ORDER BY time DESC, seq DESC LIMIT ?", (*params, limit)).fetchall()
            return rows

    def catch_up(self) -> int:
        """Index lines written since the last call; returns how many there were."""
        with self._lock, self._connect() as db:
            return self._catch_up(db)

    # -- the database ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """The index's connection, kept open: opening and closing one per query (a WAL
        checkpoint each time) would cost more than the query. Used under self._lock."""
        try:
            if self._db is None:
                self._db = self._open_db()
            yield self._db
        except sqlite3.DatabaseError:
            self._discard()  # damaged: it is only an index, the ledger files are the record
            raise

    def _open_db(self) -> sqlite3.Connection:
        if not self.db_path.exists():
            os.close(os.open(self.db_path, os.O_RDWR | os.O_CREAT, 0o600))
        db = sqlite3.connect(self.db_path, timeout=30, isolation_level=None,
                             check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _discard(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.db_path}{suffix}")

    def _catch_up(self, db: sqlite3.Connection) -> int:
        db.execute("BEGIN IMMEDIATE")
        try:
            added = self._index_new_lines(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return added

    def _index_new_lines(self, db: sqlite3.Connection) -> int:
        live = self._live_number()
        row = db.execute("SELECT segment, offset FROM progress").fetchone()
        segment, offset = row if row else (self._first_number(live), 0)
        if _size(self._open(segment, live)) < offset:
            db.execute("DELETE FROM entries")  # the files are not the ones indexed: start over
            segment, offset = self._first_number(live), 0
        added = 0
        seq = db.execute("SELECT coalesce(max(seq), 0) FROM entries").fetchone()[0]
        for number in range(segment, live + 1):
            start = offset if number == segment else 0
            handle = self._open(number, live)
            if handle is None:
                continue  # a rotated file someone removed: its lines are gone from the record
            with handle:
                rows, end = _lines(handle, number, start, seq)
            db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            seq, added, segment, offset = seq + len(rows), added + len(rows), number, end
        db.execute("DELETE FROM progress")
        db.execute("INSERT INTO progress VALUES (?, ?)", (segment, offset))
        return added

    def _live_number(self) -> int:
        """The live file's number: one past the last rotated file. Rotation renames the live
        file to its own number, so a line keeps its (number, offset) for good."""
        return max((n for n, _ in archives(self.ledger_path)), default=0) + 1

    def _first_number(self, live: int) -> int:
        return min((n for n, _ in archives(self.ledger_path)), default=live)

    def _open(self, number: int, live: int) -> BinaryIO | None:
        """The file that holds ledger file `number`, even if the live file is rotated meanwhile."""
        path = self.ledger_path
        archive = path.with_name(f"{path.stem}.{number}{path.suffix}")
        with contextlib.suppress(FileNotFoundError):
            return open(archive, "rb")
        if number != live:
            return None
        try:
            handle = open(path, "rb")
        except FileNotFoundError:
            return None
        if archive.exists():  # rotated between the two opens: its lines are in the archive now
            handle.close()
            return open(archive, "rb")
        return handle

    def _read(self, rows: list[tuple[int, int, int, int, float]]) -> list[dict[str, Any]]:
        live = self._live_number()
        handles: dict[int, BinaryIO | None] = {}
        entries = []
        try:
            for _seq, segment, offset, length, _time in rows:
                if segment not in handles:
                    handles[segment] = self._open(segment, live)
                handle = handles[segment]
                if handle is None:
                    continue
                with contextlib.suppress(ValueError):
                    entries.append(json.loads(os.pread(handle.fileno(), length, offset)))
        finally:
            for handle in handles.values():
                if handle is not None:
                    handle.close()
        return entries


def _lines(handle: BinaryIO, segment: int, start: int, seq: int) -> tuple[list[tuple[Any, ...]], int]:
    """Index rows for the whole lines of a ledger file from `start`, and the offset after them."""
    rows: list[tuple[Any, ...]] = []
    handle.seek(start)
    offset = start
    while chunk := handle.read(CHUNK):
        end = chunk.rfind(b"\n") + 1
        if end == 0:
            break  # a line still being written: the next catch-up takes it
        for line in chunk[:end].splitlines(keepends=True):
            if b'"phase": "intent"' not in line[:48]:  # its receipt repeats it: Engine._record_intent
                seq += 1
                rows.append((seq, segment, offset, len(line), *_fields(line)))
            offset += len(line)
        handle.seek(offset)
    return rows, offset


def _fields(line: bytes) -> tuple[float, str | None, str | None, str | None, str | None]:
    try:
        intent, decision = _head(line.decode("utf-8", errors="replace"))
        return (parse_time(intent.get("time")) or 0.0, _text(intent.get("session")),
                _text(intent.get("intent_id")), _text(intent.get("tool")), _text(decision))
    except (ValueError, AttributeError, TypeError):
        return 0.0, None, None, None, None  # a damaged line: found by position, never by filter


def _head(text: str) -> tuple[dict[str, Any], Any]:
    """The ToolIntent and the decision of an entry. The engine writes them first, so only they
    are parsed, not the receipt (most of the line); any other shape is parsed whole."""
    if text.startswith(ENTRY_START):
        intent, end = _DECODER.raw_decode(text, len(ENTRY_START))
        if isinstance(intent, dict) and text.startswith(DECISION_KEY, end):
            decision, _ = _DECODER.raw_decode(text, end + len(DECISION_KEY))
            return intent, decision
    entry = json.loads(text)
    return entry.get("intent") or {}, entry.get("decision")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_time(value: Any) -> float | None:
    """Epoch seconds from an ISO 8601 text (`2026-01-02T03:04:05Z`) or a number; None if neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a time without a zone is the person's local time
    return moment.timestamp()


def _where(query: LedgerQuery) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for field, column in FILTERS.items():
        value = getattr(query, field)
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if query.since is not None:
        clauses.append("time >= ?")
        params.append(query.since)
    if query.until is not None:
        clauses.append("time < ?")
        params.append(query.until)
    if query.before is not None:
        time, seq = parse_cursor(query.before)
        clauses.append("(time < ? OR (time = ? AND seq < ?))")
        params += [time, time, seq]
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), params


def parse_cursor(cursor: str) -> tuple[float, int]:
    """The (time, seq) of a page cursor; ValueError when it is not one."""
    time, _, seq = cursor.partition("/")
    return float(time), int(seq)


def _size(handle: BinaryIO | None) -> int:
    if handle is None:
        return -1
    with handle:
        return os.fstat(handle.fileno()).st_size


_indexes: dict[Path, LedgerIndex] = {}
_indexes_lock = threading.Lock()


def ledger_index(ledger_path: Path) -> LedgerIndex:
    """The shared index of a ledger file (one per path, so catch-ups do not race)."""
    with _indexes_lock:
        found = _indexes.get(ledger_path)
        if found is None:
            found = _indexes[ledger_path] = LedgerIndex(ledger_path)
        return found
