"""Parses unified diffs into typed lines, and pairs them up for a side-by-side view (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class Kind(IntEnum):
    CONTEXT = 0
    ADDED = 1
    REMOVED = 2
    HUNK = 3
    HEADER = 4  # ---, +++, diff --git, index ...
    FILLER = 5  # side by side: nothing on this side
    NOTE = 6  # "\ No newline at end of file"


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: Kind
    text: str  # for ADDED/REMOVED/CONTEXT: with its one-character prefix
    old_no: int | None = None
    new_no: int | None = None

    @property
    def body(self) -> str:
        """The text without the diff prefix (what a side-by-side pane shows)."""
        if self.kind in (Kind.CONTEXT, Kind.ADDED, Kind.REMOVED):
            return self.text[1:]
        return self.text


def parse_unified(text: str) -> list[DiffLine]:
    lines: list[DiffLine] = []
    old = new = 0
    in_hunk = False
    for raw in text.splitlines():
        match = _HUNK.match(raw) if raw.startswith("@@") else None
        if match:
            old, new, in_hunk = int(match.group(1)), int(match.group(2)), True
            lines.append(DiffLine(Kind.HUNK, raw))
        elif in_hunk and raw.startswith("+"):
            lines.append(DiffLine(Kind.ADDED, raw, None, new))
            new += 1
        elif in_hunk and raw.startswith("-") and not raw.startswith("--- "):
            lines.append(DiffLine(Kind.REMOVED, raw, old, None))
            old += 1
        elif in_hunk and (raw.startswith(" ") or raw == ""):
            lines.append(DiffLine(Kind.CONTEXT, raw or " ", old, new))
            old, new = old + 1, new + 1
        elif raw.startswith("\\"):
            lines.append(DiffLine(Kind.NOTE, raw))
        else:
            in_hunk = False
            lines.append(DiffLine(Kind.HEADER, raw))
    return lines


def side_by_side(lines: list[DiffLine]) -> tuple[list[DiffLine], list[DiffLine]]:
    """Old and new columns of equal length: a run of removals faces the additions after it, and
    a file's `---` header faces its `+++` header (each once, on its own side)."""
    left: list[DiffLine] = []
    right: list[DiffLine] = []
    removed: list[DiffLine] = []
    added: list[DiffLine] = []
    old_header: list[DiffLine] = []  # a `---` waiting for the `+++` that faces it

    def flush() -> None:
        for i in range(max(len(removed), len(added))):
            left.append(removed[i] if i < len(removed) else DiffLine(Kind.FILLER, ""))
            right.append(added[i] if i < len(added) else DiffLine(Kind.FILLER, ""))
        removed.clear()
        added.clear()

    for line in lines:
        if old_header:
            new_side = line if line.kind == Kind.HEADER and line.text.startswith("+++ ") else None
            left.append(old_header.pop())
            right.append(new_side or DiffLine(Kind.FILLER, ""))
            if new_side is not None:
                continue
        if line.kind == Kind.HEADER and line.text.startswith("--- "):
            flush()
            old_header.append(line)
        elif line.kind == Kind.REMOVED:
            if added:
                flush()
            removed.append(line)
        elif line.kind == Kind.ADDED:
            added.append(line)
        else:
            flush()
            left.append(line)
            right.append(line)
    flush()
    for line in old_header:  # a `---` that ends the diff
        left.append(line)
        right.append(DiffLine(Kind.FILLER, ""))
    return left, right


def new_path(header: str) -> str | None:
    """The file a `+++ b/path` (or `--- a/path`) header names; None for other lines."""
    if header.startswith(("+++ ", "--- ")):
        path = header[4:].split("\t", 1)[0].strip()
        if path != "/dev/null":
            return path[2:] if path.startswith(("a/", "b/")) else path
    return None


def stats(lines: list[DiffLine]) -> tuple[int, int]:
    """How many lines the diff adds and removes."""
    added = sum(1 for line in lines if line.kind == Kind.ADDED)
    return added, sum(1 for line in lines if line.kind == Kind.REMOVED)
