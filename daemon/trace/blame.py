"""Blame by intent: for each line of a file as it is now, the call that last wrote it, or none.

The ledger's receipts say, for each call, the file's sha256 before and after and (since receipts
carry `lines`) the hunks the call wrote. Replaying those hunks in ledger order carries each line's
author through later edits as lines shift. Where the file changed between two calls (a person's
edit, a tool outside intentd), the kept texts of both versions are diffed and the changed lines
lose their author: they show as `-`, as does every line changed since the last call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from intentd.daemon.engine.ledger import segments
from intentd.daemon.trace.contents import ContentStore
from intentd.daemon.trace.lines import Hunk, line_count, split_lines, text_hunks
from intentd.daemon.utils.reading import read_regular

UNKNOWN = object()  # the file's state before the first recorded call, or after an untraced one


@dataclass(frozen=True)
class Author:
    """The call that wrote a line."""

    call_id: str
    intent_id: str | None
    session: str | None
    agent: str | None
    tool: str | None
    time: str | None

    def to_json(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "intent_id": self.intent_id, "session": self.session,
                "agent": self.agent, "tool": self.tool, "time": self.time}


@dataclass(frozen=True)
class Write:
    """One recorded change of the file: its text's hash before and after, and the hunks when known."""

    author: Author
    before: str | None
    after: str | None
    hunks: list[Hunk] | None


@dataclass(frozen=True)
class BlameLine:
    number: int
    text: str
    author: Author | None


def writes_of(ledger_path: Path, path: str) -> Iterator[Write]:
    """The recorded changes of the file at absolute `path`, oldest first."""
    needle = json.dumps(path, ensure_ascii=False).encode("utf-8", "backslashreplace")
    for part in segments(ledger_path):
        try:
            handle = open(part, "rb")
        except FileNotFoundError:
            continue
        with handle:
            for raw in handle:
                if needle in raw and b'"phase": "intent"' not in raw[:48]:
                    write = _write(raw, path)
                    if write is not None:
                        yield write


def _write(raw: bytes, path: str) -> Write | None:
    try:
        entry = json.loads(raw)
        receipt, intent = entry["receipt"], entry["intent"]
        after = receipt["files_after"]
        if path not in after:
            return None
        before = receipt.get("files_before", {}).get(path)
        if after[path] == before:
            return None
        found = (receipt.get("lines") or {}).get(path)
        author = Author(str(intent["id"]), intent.get("intent_id"), intent.get("session"),
                        intent.get("agent"), intent.get("tool"), intent.get("time"))
        return Write(author, before, after[path], _hunks(found))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # a damaged or foreign line: the chain walk reports it, blame skips it


def _hunks(found: Any) -> list[Hunk] | None:
    if not isinstance(found, list):
        return None
    out: list[Hunk] = []
    for hunk in found:
        if (not isinstance(hunk, list) or len(hunk) != 4
                or not all(isinstance(n, int) and n >= 0 for n in hunk)):
            return None
        out.append((hunk[0], hunk[1], hunk[2], hunk[3]))
    return out


class _Replay:
    """Each line's author as the recorded writes are applied one after another."""

    def __init__(self, store: ContentStore) -> None:
        self.store = store
        self.digest: object = UNKNOWN  # the hash of the text `authors` describes
        self.authors: list[Author | None] | None = None  # None: the line count is not known

    def apply(self, write: Write) -> None:
        if self.digest != write.before:
            self._changed_outside(write.before)
        if self.authors is not None and write.hunks is not None:
            self._splice(write.hunks, write.author)
        else:
            self._rebuild(write)
        self.digest = write.after

    def finish(self, current: bytes) -> list[Author | None]:
        """The authors of the lines of `current`, the file as it is now."""
        lines = line_count(current)
        if self.authors is None or self.digest is UNKNOWN:
            return [None] * lines
        if isinstance(self.digest, str) and _sha(current) == self.digest:
            return self.authors  # unchanged since the last recorded write
        earlier = self.store.get(self.digest) if isinstance(self.digest, str) else b""
        if earlier is None:
            return [None] * lines
        self._splice(text_hunks(earlier, current), None)
        return self.authors

    def _changed_outside(self, before: str | None) -> None:
        """The text changed between two recorded writes: the lines changed lose their author."""
        old = self.store.get(self.digest) if isinstance(self.digest, str) else (
            b"" if self.digest is None else None)
        new = self.store.get(before)
        if new is None:
            self.authors = None
        elif old is None or self.authors is None:
            self.authors = [None] * line_count(new)
        else:
            self._splice(text_hunks(old, new), None)
        self.digest = before

    def _rebuild(self, write: Write) -> None:
        """No hunks to splice: diff the kept texts, or give up on the lines' authors."""
        old, new = self.store.get(write.before), self.store.get(write.after)
        if new is None:
            self.authors = None
            return
        if old is not None and self.authors is not None:
            self._splice(text_hunks(old, new), write.author)
            return
        # What the lines were is lost; the lines this call wrote are still known from its hunks.
        count = line_count(new)
        self.authors = [None] * count
        for _i1, _i2, j1, j2 in write.hunks or ():
            self.authors[j1:j2] = [write.author] * (j2 - j1)
        self.authors = self.authors[:count]

    def _splice(self, found: Iterable[Hunk], author: Author | None) -> None:
        assert self.authors is not None
        for i1, i2, j1, j2 in sorted(found, reverse=True):  # last first: earlier indexes hold
            if i2 > len(self.authors):
                self.authors = None
                return
            self.authors[i1:i2] = [author] * (j2 - j1)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def blame(ledger_path: Path, store: ContentStore, path: Path) -> list[BlameLine]:
    """Each line of the file at absolute `path` as it is now, with the call that last wrote it."""
    current = read_regular(path)  # a FIFO named by a caller must not hold a thread
    replay = _Replay(store)
    for write in writes_of(ledger_path, str(path)):
        replay.apply(write)
    authors = replay.finish(current)
    lines = split_lines(current)
    if len(authors) != len(lines):  # a replay that lost count: say nothing rather than lie
        authors = [None] * len(lines)
    return [BlameLine(n, text.decode("utf-8", "replace").rstrip("\r\n"), author)
            for n, (text, author) in enumerate(zip(lines, authors, strict=True), 1)]
