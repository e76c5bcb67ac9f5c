"""Walking a ledger's hash chain: the first line changed, removed or inserted, by file and line."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from intentd.daemon.engine.ledger import CHAIN_KEY, CHAIN_TAIL, GENESIS, segments

READ_BUFFER = 1024 * 1024


@dataclass(frozen=True)
class Place:
    """A line of the ledger: its file's name and its 1-based number in that file."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class ChainReport:
    """What a walk found. `ok` holds when every chained line links to the one before it."""

    lines: int = 0  # whole lines read
    chained: int = 0
    unchained: int = 0  # lines written before the chain began (older versions of intentd)
    problem: str | None = None  # the first break, in words
    kind: str | None = None  # changed | removed | inserted | damaged
    at: Place | None = None  # the line the problem names
    torn: Place | None = None  # a last line cut short by a crash mid-write: not a break
    head_seq: int = 0
    head_hash: str = GENESIS
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.problem is None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "lines": self.lines, "chained": self.chained,
                "unchained": self.unchained, "problem": self.problem, "kind": self.kind,
                "at": str(self.at) if self.at else None,
                "torn": str(self.torn) if self.torn else None, "head_seq": self.head_seq,
                "notes": self.notes}


class _Walk:
    """The state of one walk: the line before, its place, and the number the next must carry."""

    def __init__(self, report: ChainReport) -> None:
        self.report = report
        self.prev_hash = GENESIS
        self.prev_place: Place | None = None
        self.next_seq = 0  # 0 until the first chained line

    def sync(self, prev: bytes, expected: int, fast: int, place: Place | None) -> None:
        """Take over from the fast path: `fast` lines linked as expected, the last at `place`."""
        if fast:
            self.prev_hash, self.next_seq = prev.decode(), expected
            self.report.lines += fast
            self.report.chained += fast
            self.report.head_seq, self.report.head_hash = expected - 1, self.prev_hash
            self.prev_place = place

    def line(self, raw: bytes, place: Place) -> bool:
        """Check one whole line; False once the chain is broken (the report says where)."""
        report = self.report
        report.lines += 1
        match = CHAIN_TAIL.search(raw, max(0, len(raw) - 120)) if CHAIN_KEY in raw[-120:] else None
        if match is None:
            if self.next_seq:
                return self._break("inserted", place, f"line {place} carries no chain link: it "
                                   "was inserted, or changed after it was written")
            report.unchained += 1
        else:
            seq, prev = int(match[1]), match[2].decode()
            if not self._link(seq, prev, place):
                return False
            report.chained += 1
            report.head_seq, self.next_seq = seq, seq + 1
        self.prev_hash = hashlib.sha256(raw).hexdigest()
        report.head_hash, self.prev_place = self.prev_hash, place
        return True

    def _link(self, seq: int, prev: str, place: Place) -> bool:
        expected = self.next_seq or 1
        if seq > expected:
            missing = seq - expected
            where = f"before line {place}" if self.prev_place else f"at the start ({place})"
            return self._break("removed", place, f"{missing} line(s) removed {where}: it is "
                               f"number {seq}, {expected} was expected")
        if seq < expected:
            return self._break("inserted", self.prev_place or place,
                               f"line {self.prev_place} was inserted: line {place} carries "
                               f"number {seq}, which it already had")
        if prev != self.prev_hash:
            if self.prev_place is None:
                return self._break("removed", place, f"line {place} is the first of the ledger "
                                   "but links to a line before it: lines were removed")
            return self._break("changed", self.prev_place, f"line {self.prev_place} was changed "
                               f"(line {place} holds the hash of what it was)")
        return True

    def _break(self, kind: str, place: Place, problem: str) -> bool:
        self.report.kind, self.report.at, self.report.problem = kind, place, problem
        return False


def verify(ledger_path: Path) -> ChainReport:
    """Walk every file of the ledger at `ledger_path`, oldest first, to the first break."""
    report = ChainReport()
    walk = _Walk(report)
    parts = [p for p in segments(ledger_path) if p.exists()]
    for index, part in enumerate(parts):
        with open(part, "rb", buffering=READ_BUFFER) as handle:
            if not _walk_file(walk, handle, part.name, index == len(parts) - 1):
                return report
    _note_unchained(report)
    return report


def _walk_file(walk: _Walk, handle: BinaryIO, name: str, last_file: bool) -> bool:
    """The lines of one file. A line that links as expected takes the fast path (a search at
    its end and one sha256); anything else goes to _Walk.line, which says what broke."""
    search, sha256 = CHAIN_TAIL.search, hashlib.sha256
    prev, expected, number, fast = walk.prev_hash.encode(), walk.next_seq, 0, 0
    for number, raw in enumerate(handle, 1):
        match = search(raw, len(raw) - 120 if len(raw) > 120 else 0)
        if (match is not None and expected and match[2] == prev and int(match[1]) == expected
                and raw[-1] == 10):  # a whole line: a torn one goes the slow way
            prev, expected, fast = sha256(raw).hexdigest().encode(), expected + 1, fast + 1
            continue
        walk.sync(prev, expected, fast, Place(name, number - 1) if number > 1 else None)
        fast = 0
        place = Place(name, number)
        if not raw.endswith(b"\n"):
            return _unended(walk, place, last_file)
        if not walk.line(raw, place):
            return False
        prev, expected = walk.prev_hash.encode(), walk.next_seq
    walk.sync(prev, expected, fast, Place(name, number) if number else None)
    return True


def _unended(walk: _Walk, place: Place, last_file: bool) -> bool:
    if last_file:  # a crash mid-write: the ledger drops it when next opened
        walk.report.torn = place
        walk.report.notes.append(f"line {place} is torn (cut short by a crash mid-write); it "
                                 "is not part of the chain")
        return False
    walk._break("damaged", place, f"line {place} ends without a newline in the middle of the "
                "ledger")
    return False


def _note_unchained(report: ChainReport) -> None:
    if report.unchained and report.chained:
        report.notes.append(f"the first {report.unchained} line(s) were written before the "
                            "chain began and are not covered by it")
    elif report.unchained:
        report.notes.append("no line is chained yet: the ledger was written by an older "
                            "intentd; the chain begins with the next line")


def against_head(report: ChainReport, seq: int, digest: str) -> ChainReport:
    """A walk checked against the head the running daemon holds in memory: catches lines cut
    from the end and a last line changed, which no later link can show. (Lines written since
    by another process make the files run past it; those are not compared.)"""
    if not report.ok or not seq:
        return report
    if report.head_seq < seq:
        report.kind, report.at = "removed", None
        report.problem = (f"the ledger ends at line number {report.head_seq}, but the daemon "
                          f"wrote number {seq}: lines were cut from the end")
    elif report.head_seq == seq and report.head_hash != digest:
        report.kind = "changed"
        report.problem = (f"the last line (number {seq}) is not the one the daemon wrote: it "
                          "was changed")
    return report
