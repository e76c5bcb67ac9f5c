"""Hunks: applying them to the text before gives the text after, and unchanged lines stay out."""

from __future__ import annotations

import random

import pytest

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


def rebuilt(before: list[bytes], after: list[bytes]) -> list[bytes]:
    """The text before with each hunk applied: the text after, if the hunks are right."""
    text = list(before)
    for i1, i2, j1, j2 in sorted(hunks(before, after), reverse=True):
        text[i1:i2] = after[j1:j2]
    return text


@pytest.mark.timeout(30)
def test_a_file_of_repeated_lines_rewritten_is_matched_in_moments() -> None:
    # 4 KB of one line, rewritten as two lines in turn: difflib's plain matcher took over two
    # minutes, holding the interpreter lock the daemon's other calls need.
    cases = [([b"a\n"] * 2000, [b"a\n", b"b\n"] * 1000),   # as long as each other
             ([b"a\n"] * 20000, [b"a\n", b"b\n"] * 99),    # the text before far longer
             ([b"a\n", b"b\n"] * 99, [b"a\n"] * 20000)]    # the text after far longer
    for before, after in cases:
        assert rebuilt(before, after) == after


def test_past_the_plain_matchers_size_an_edit_still_touches_only_its_lines() -> None:
    rng = random.Random(2)
    before = [f"line {rng.randrange(10**6)}\n".encode() for _ in range(1000)]
    before[100:900:7] = [b"\n"] * len(before[100:900:7])  # popular lines, as blank ones are
    after = [*before[:300], b"new\n", *before[300:700], *before[701:]]
    assert hunks(before, after) == [(300, 300, 300, 301), (700, 701, 701, 701)]
    assert rebuilt(before, after) == after
