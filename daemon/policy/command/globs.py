"""Command-rule globs: `*` any characters (spaces and `/` included), `?` one, the rest literal, anchored.

Matching runs in time linear in the text (no regex backtracking across stars), because
the text is an agent's command and may be built to make a backtracking matcher crawl.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Glob:
    """A pattern split at its stars: text must start with `head`, end with `tail`, and
    contain the `middle` segments in order between them. `?` matches any one character."""

    head: str
    middle: tuple[str, ...]
    tail: str
    starred: bool


@functools.lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> Glob:
    """Split `pattern` once; `[`, `\\` and every other character are literal."""
    segments = pattern.split("*")
    if len(segments) == 1:
        return Glob(pattern, (), "", False)
    return Glob(segments[0], tuple(s for s in segments[1:-1] if s), segments[-1], True)


@functools.lru_cache(maxsize=1024)
def _segment_regex(segment: str) -> re.Pattern[str]:
    return re.compile(".".join(re.escape(part) for part in segment.split("?")), re.DOTALL)


def _same(segment: str, text: str, at: int) -> bool:
    """Whether `segment` (with `?` wildcards) matches `text` at `at`."""
    if "?" not in segment:
        return text.startswith(segment, at)
    return _segment_regex(segment).match(text, at) is not None and at + len(segment) <= len(text)


def _find(segment: str, text: str, start: int, end: int) -> int:
    """Leftmost position ≥ start where `segment` fits before `end`, or -1."""
    if "?" not in segment:
        return text.find(segment, start, end)
    found = _segment_regex(segment).search(text, start, end)
    return -1 if found is None else found.start()


def glob_matches(pattern: str, text: str) -> bool:
    """Whether the whole of `text` matches `pattern`."""
    glob = compile_glob(pattern)
    if not glob.starred:
        return len(text) == len(glob.head) and _same(glob.head, text, 0)
    end = len(text) - len(glob.tail)
    if end < len(glob.head) or not _same(glob.head, text, 0) or not _same(glob.tail, text, end):
        return False
    position = len(glob.head)
    for segment in glob.middle:  # leftmost placement of each segment is always best
        found = _find(segment, text, position, end)
        if found < 0:
            return False
        position = found + len(segment)
    return True


def glob_could_extend(pattern: str, prefix: str) -> bool:
    """Whether some text starting with `prefix` matches `pattern`.

    Used for commands that get more arguments at run time (`xargs rm -rf`): a deny rule
    `rm -rf /*` must catch them, whatever the arguments turn out to be.
    """
    glob = compile_glob(pattern)
    head = glob.head
    if len(prefix) <= len(head):
        return _same(head[:len(prefix)], prefix, 0) and (
            glob.starred or len(prefix) <= len(head))
    return glob.starred and _same(head, prefix, 0)
