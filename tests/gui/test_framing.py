"""LineBuffer: lines split across reads, several per read, and oversized lines skipped."""

from __future__ import annotations

from intentd.gui.framing import LineBuffer


def test_lines_split_across_reads_are_joined() -> None:
    buffer = LineBuffer(100)
    assert buffer.feed(b'{"a"') == []
    assert buffer.feed(b':1}\n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert buffer.feed(b":3}\n") == [b'{"c":3}']


def test_empty_lines_are_dropped() -> None:
    assert LineBuffer(100).feed(b"\n\nx\n\n") == [b"x"]


def test_an_oversized_line_is_skipped_and_the_next_one_kept() -> None:
    buffer = LineBuffer(10)
    assert buffer.feed(b"x" * 8) == []
    assert buffer.feed(b"x" * 8) == []  # over the limit: dropped, not held
    assert buffer.feed(b"yyy\nok\n") == [b"ok"]
    assert buffer.skipped_lines == 1


def test_a_long_line_in_many_small_reads_is_scanned_once() -> None:
    buffer = LineBuffer(10_000_000)
    for _ in range(2000):
        assert buffer.feed(b"z" * 500) == []
    assert buffer.feed(b"\n") == [b"z" * 1_000_000]


def test_clear_forgets_a_partial_line() -> None:
    buffer = LineBuffer(100)
    buffer.feed(b"partial")
    buffer.clear()
    assert buffer.feed(b"whole\n") == [b"whole"]
