"""Hunks: applying them to the text before gives the text after, and unchanged lines stay out."""

from __future__ import annotations

import random

from intentd.daemon.trace.lines import hunks, written_ranges


def test_hunks_turn_the_text_before_into_the_text_after() -> None:
    rng = random.Random(1)
    for _ in range(1000):
        before = [str(rng.randrange(5)).encode() for _ in range(rng.randrange(0, 200))]
        after = list(before)
        for _ in range(rng.randrange(0, 4)):
            at = rng.randrange(len(after) + 1)
            if rng.randrange(3) == 0 or not after:
                after.insert(at, b"new")
            elif rng.randrange(2):
                del after[min(at, len(after) - 1)]
            else:
                after[min(at, len(after) - 1)] = b"changed"
        found = hunks(before, after)
        rebuilt = list(before)
        for i1, i2, j1, j2 in sorted(found, reverse=True):
            rebuilt[i1:i2] = after[j1:j2]
        assert rebuilt == after


def test_one_line_changed_in_a_long_file_is_one_range() -> None:
    before = [f"{n}\n".encode() for n in range(5000)]
    after = [*before[:2500], b"new\n", b"lines\n", *before[2501:]]
    assert hunks(before, after) == [(2500, 2501, 2500, 2502)]
    assert written_ranges(hunks(before, after)) == [(2501, 2502)]
    assert hunks(before, before) == []
