"""Which lines changed between two texts, as hunks: the unit blame and the trace export share."""

from __future__ import annotations

from difflib import SequenceMatcher

# (i1, i2, j1, j2): lines before[i1:i2] became after[j1:j2]; zero-based, ends exclusive
Hunk = tuple[int, int, int, int]
MAX_MATCHED = 4_000_000  # above this many line pairs the middle is taken as one replaced block
PLAIN_MATCHED = 40_000  # up to this many, lines are matched without difflib's autojunk (_matched)


def split_lines(data: bytes) -> list[bytes]:
    """Lines as editors and `wc -l` count them: each ends at \\n (which it keeps)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])  # a last line without a newline
    return lines


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def text_hunks(before: bytes, after: bytes) -> list[Hunk]:
    """hunks() of two whole texts. The equal start and end are found on the bytes (a memcmp)
    and only the lines between are split and matched: a gap in a long file costs little."""
    if before == after:
        return []
    start = before.rfind(b"\n", 0, _common_bytes(before, after, 1)) + 1
    limit = min(len(before), len(after)) - start
    tail = _common_bytes(before, after, -1, limit)
    end_a, end_b = len(before) - tail, len(after) - tail
    # the tail must start a line in both texts (or be empty)
    while not (_line_starts(before, end_a, start) and _line_starts(after, end_b, start)):
        end_a, end_b = end_a + 1, end_b + 1
        if end_a >= len(before) or end_b >= len(after):
            end_a, end_b = len(before), len(after)
            break
    lo = before.count(b"\n", 0, start)
    found = hunks(split_lines(before[start:end_a]), split_lines(after[start:end_b]))
    return [(i1 + lo, i2 + lo, j1 + lo, j2 + lo) for i1, i2, j1, j2 in found]


def _line_starts(text: bytes, at: int, start: int) -> bool:
    return at == start or text[at - 1:at] == b"\n"


def _common_bytes(a: bytes, b: bytes, step: int, limit: int | None = None) -> int:
    """The length of the common start (step 1) or end (step -1) of a and b, by bisection."""
    low, high = 0, min(len(a), len(b)) if limit is None else limit
    while low < high:
        middle = (low + high + 1) // 2
        same = (a[:middle] == b[:middle] if step > 0
                else a[len(a) - middle:] == b[len(b) - middle:])
        low, high = (middle, high) if same else (low, middle - 1)
    return low


def hunks(before: list[bytes], after: list[bytes]) -> list[Hunk]:
    """The changed blocks, in order. The common start and end are skipped first: an agent's
    edit touches a few lines of a long file, and those are all the matcher then sees."""
    n, m = len(before), len(after)
    lo = _common_run(before, after, 0, 0, 1, min(n, m))
    hi = _common_run(before, after, n - 1, m - 1, -1, min(n, m) - lo)
    if lo + hi == n and lo + hi == m:
        return []
    middle_a, middle_b = before[lo:n - hi], after[lo:m - hi]
    if not middle_a or not middle_b or len(middle_a) * len(middle_b) > MAX_MATCHED:
        return [(lo, n - hi, lo, m - hi)]
    return [(i1 + lo, i2 + lo, j1 + lo, j2 + lo) for i1, i2, j1, j2 in _matched(middle_a, middle_b)]


def _matched(a: list[bytes], b: list[bytes]) -> list[Hunk]:
    """SequenceMatcher's changed blocks, its work bounded. Matching lines that repeat costs it
    time cubic in their count: a 4 KB file of one line repeated, rewritten, took minutes (all the
    while holding the interpreter lock the daemon's other calls need). So past PLAIN_MATCHED line
    pairs, lines that are popular in the longer text (over 1% of it) only extend a match, never
    start one (difflib's autojunk, which takes effect from 200 lines: the longer text is the one
    it indexes). Below that, the plain matcher's worst is about 0.1 s."""
    if len(a) * len(b) <= PLAIN_MATCHED:
        return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2
                in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]
    if len(b) >= len(a):
        return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2
                in SequenceMatcher(None, a, b).get_opcodes() if tag != "equal"]
    return [(i1, i2, j1, j2) for tag, j1, j2, i1, i2  # b indexed against a: the blocks swapped
            in SequenceMatcher(None, b, a).get_opcodes() if tag != "equal"]


def _common_run(a: list[bytes], b: list[bytes], i: int, j: int, step: int, limit: int) -> int:
    """How many lines from a[i] and b[j] on (forwards or backwards) are equal, at most `limit`:
    compared a block at a time, as slices, so the long equal runs cost C loops, not Python's."""
    count, block = 0, 256
    while count < limit:
        take = min(block, limit - count)
        if step > 0:
            same = a[i + count:i + count + take] == b[j + count:j + count + take]
        else:
            same = (a[i - count - take + 1:i - count + 1] == b[j - count - take + 1:j - count + 1])
        if same:
            count += take
        elif take == 1:
            break
        else:
            block = max(1, take // 8)
    return count


def written_ranges(found: list[Hunk]) -> list[tuple[int, int]]:
    """The 1-based, inclusive line ranges of the new text the hunks wrote (deletions write none)."""
    return [(j1 + 1, j2) for _i1, _i2, j1, j2 in found if j2 > j1]
