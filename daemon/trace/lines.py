"""Which lines changed between two texts, as hunks: the unit blame and the trace export share."""

from __future__ import annotations

from difflib import SequenceMatcher

# (i1, i2, j1, j2): lines before[i1:i2] became after[j1:j2]; zero-based, ends exclusive
Hunk = tuple[int, int, int, int]
MAX_MATCHED = 4_000_000  # above this many line pairs the middle is taken as one replaced block


def split_lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def hunks(before: list[bytes], after: list[bytes]) -> list[Hunk]:
    """The changed blocks, in order. The common start and end are skipped first: an agent's
    edit touches a few lines of a long file, and those are all the matcher then sees."""
    n, m = len(before), len(after)
    lo = 0
    while lo < n and lo < m and before[lo] == after[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and before[n - 1 - hi] == after[m - 1 - hi]:
        hi += 1
    if lo + hi == n and lo + hi == m:
        return []
    middle_a, middle_b = before[lo:n - hi], after[lo:m - hi]
    if not middle_a or not middle_b or len(middle_a) * len(middle_b) > MAX_MATCHED:
        return [(lo, n - hi, lo, m - hi)]
    matcher = SequenceMatcher(None, middle_a, middle_b, autojunk=False)
    return [(i1 + lo, i2 + lo, j1 + lo, j2 + lo)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def written_ranges(found: list[Hunk]) -> list[tuple[int, int]]:
    """The 1-based, inclusive line ranges of the new text the hunks wrote (deletions write none)."""
    return [(j1 + 1, j2) for _i1, _i2, j1, j2 in found if j2 > j1]
