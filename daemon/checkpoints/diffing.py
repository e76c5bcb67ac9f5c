"""Unified diffs between two recorded states of a file, git style (binary and mode changes included)."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from .model import DiffStatus, FileDiff
from .state import Entry

# Content of an entry (file bytes, or a symlink's target), loaded lazily since most diffs
# only need the few files that changed.
Loader = Callable[[str, Entry], bytes]


def git_mode(entry: Entry) -> str:
    """Git's notation, with the real permission bits (git itself only knows 644 and 755)."""
    if entry.kind == "link":
        return "120000"
    return f"100{entry.perm & 0o777:03o}"


def _status(old: Entry, new: Entry) -> DiffStatus:
    if not old.present:
        return "added"
    if not new.present:
        return "deleted"
    return "modified"


def _text(data: bytes) -> list[str] | None:
    """The lines of data, or None when it is binary (NUL byte or not UTF-8)."""
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def _body(path: str, old: Entry, new: Entry, load: Loader) -> list[str]:
    for side, entry in (("old", old), ("new", new)):
        if entry.kind == "skipped":
            return [f"{side} content not saved ({entry.note})\n"]
    if old.present and new.present and old.sha == new.sha:
        return []
    before = _text(load(path, old)) if old.present else []
    after = _text(load(path, new)) if new.present else []
    a_name = f"a/{path}" if old.present else "/dev/null"
    b_name = f"b/{path}" if new.present else "/dev/null"
    if before is None or after is None:
        return [f"Binary files {a_name} and {b_name} differ\n"]
    lines = []
    for line in difflib.unified_diff(before, after, a_name, b_name):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return lines


def file_diff(path: str, old: Entry, new: Entry, load: Loader) -> FileDiff | None:
    """How path changed from old to new, or None when the two states are the same."""
    if old.same_state(new) or (not old.present and not new.present):
        return None
    status = _status(old, new)
    head = [f"diff --git a/{path} b/{path}\n"]
    if status == "added":
        head.append(f"new file mode {git_mode(new)}\n")
    elif status == "deleted":
        head.append(f"deleted file mode {git_mode(old)}\n")
    elif git_mode(old) != git_mode(new):
        head.append(f"old mode {git_mode(old)}\nnew mode {git_mode(new)}\n")
    return FileDiff(path, status, "".join(head + _body(path, old, new, load)))


def unknown_diff(path: str, why: str) -> FileDiff:
    """A file present now whose state at the checkpoint is unknown: shown, never guessed at.
    "modified" because it most likely existed then (the store first saw it after a gap)."""
    return FileDiff(path, "modified", f"diff --git a/{path} b/{path}\n{why}\n")
