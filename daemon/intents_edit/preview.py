"""Scope previews: which of the workspace's files a list of globs owns now, and what a change to the
list adds or removes. Decided as daemon/policy/globs.py decides one path, for all files at once."""

from __future__ import annotations

import os
import re
import threading
import time
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from intentd.daemon.policy.globs import DIR_MARK, FLOATING, PatternList, _scan_literal, fold
from intentd.daemon.policy.ignore import IgnoreRules

LISTING_TTL = 10.0       # older than this, a listing is taken again in the background
MAX_FILES = 500_000      # a larger tree is previewed on its first half million files
SKIPPED_FOLDERS = {".git", ".orchestration"}  # .orchestration/: the person's, whatever a scope says
PATTERN_CACHE = 256      # per workspace: one keystroke changes one line, the others are kept


@dataclass(frozen=True)
class Listing:
    files: tuple[str, ...]  # workspace-relative posix paths, sorted
    truncated: bool
    taken_at: float


def list_files(root: str, ignore: IgnoreRules) -> Listing:
    """Every file under root, not following links to folders, without .git and ignored paths."""
    found: list[str] = []
    folders = [""]
    while folders and len(found) < MAX_FILES:
        folder = folders.pop()
        try:
            entries = list(os.scandir(os.path.join(root, folder) if folder else root))
        except OSError:
            continue  # unreadable, or gone meanwhile
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name not in SKIPPED_FOLDERS and not ignore.ignores(rel):
                    folders.append(rel)
            else:
                found.append(rel)
    files = tuple(sorted(found))
    if ignore.patterns:
        hidden = PatternSet(ignore.patterns, ignore.fold_case).owned(files)
        marks = hidden.to_bytes(len(files), "little")
        files = tuple(f for f, mark in zip(files, marks, strict=True) if not mark)
    return Listing(files, len(found) >= MAX_FILES, time.monotonic())


class PatternSet:
    """Gitignore-style lines matched against a sorted listing: each line is one regex pass over
    the files it can reach (a literal prefix narrows them), kept as a bit mask (bit 8*i: file i),
    so combining the lines costs a few integer operations, not set work per file."""

    def __init__(self, lines: Sequence[str], fold_case: bool = False,
                 cache: OrderedDict[Any, tuple[int, int]] | None = None) -> None:
        self.fold_case = fold_case
        self.cache = cache if cache is not None else OrderedDict()
        self.patterns: list[tuple[str, bool]] = []  # (regex, include)
        self.problems: list[dict[str, Any]] = []
        for number, line in enumerate(lines, 1):
            try:
                source, include = GitIgnoreSpecPattern.pattern_to_regex(
                    fold(line) if fold_case else line)
            except ValueError as exc:  # a line that is no pattern, such as a lone `!`
                self.problems.append({"line": number, "glob": line, "message": str(exc)})
                continue
            if source is not None and include is not None:
                self.patterns.append((source, include))

    def owned(self, files: Sequence[str], key: Any = None) -> int:
        """The mask of the files the lines own: the last line that matches a file as a file
        decides; if none does, the last that matches it through a folder (as PatternList)."""
        decided = owned = 0
        by_folder: list[tuple[int, bool]] = []
        for source, include in reversed(self.patterns):
            as_file, through_folder = self._hits(source, files, key)
            fresh = as_file & ~decided
            decided |= fresh
            if include:
                owned |= fresh
            by_folder.append((through_folder, include))
        for hits, include in by_folder:
            fresh = hits & ~decided
            decided |= fresh
            if include:
                owned |= fresh
        return owned

    def _hits(self, source: str, files: Sequence[str], key: Any) -> tuple[int, int]:
        cache_key = (key, source, self.fold_case)
        if key is not None and cache_key in self.cache:
            self.cache.move_to_end(cache_key)
            return self.cache[cache_key]
        hits = _scan(re.compile(source), files, self.fold_case)
        if key is not None:
            self.cache[cache_key] = hits
            while len(self.cache) > PATTERN_CACHE:
                self.cache.popitem(last=False)
        return hits


def _reach(source: str, files: Sequence[str]) -> tuple[int, int]:
    """The slice of the sorted files an anchored regex can match: those with its literal prefix."""
    if not source.startswith("^") or source.startswith(FLOATING):
        return 0, len(files)
    prefix, _stop = _scan_literal(source[1:])
    if not prefix:
        return 0, len(files)
    after = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return bisect_left(files, prefix), bisect_left(files, after)


def _scan(regex: re.Pattern[str], files: Sequence[str], fold_case: bool) -> tuple[int, int]:
    low, high = (0, len(files)) if fold_case else _reach(regex.pattern, files)
    subject = [fold(f) for f in files[low:high]] if fold_case else files[low:high]
    found = list(map(regex.search, subject))  # the regex pass, at C speed
    as_file = bytearray(len(files))
    through_folder = bytearray(len(files)) if DIR_MARK in regex.groupindex else None
    for index in compress(range(len(found)), found):
        if through_folder is not None and found[index].group(DIR_MARK):  # type: ignore[union-attr]
            through_folder[low + index] = 1
        else:
            as_file[low + index] = 1
    return (int.from_bytes(as_file, "little"),
            int.from_bytes(through_folder, "little") if through_folder is not None else 0)


def paths_of(files: Sequence[str], mask: int, limit: int) -> list[str]:
    """The first `limit` files in `mask`, in the listing's order."""
    marks = mask.to_bytes(len(files), "little")
    out: list[str] = []
    at = marks.find(1)
    while at >= 0 and len(out) < limit:
        out.append(files[at])
        at = marks.find(1, at + 1)
    return out


class ScopePreviewer:
    """One per workspace: the file listing and the per-line matches, so a keystroke costs one
    regex pass over the files. A listing older than LISTING_TTL is served while a new one is
    taken in the background: no keystroke waits for the disk, except the very first."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._listing: Listing | None = None
        self._refreshing = False
        self._cache: OrderedDict[Any, tuple[int, int]] = OrderedDict()

    def listing(self, ignore: IgnoreRules, max_age: float | None = None) -> Listing:
        """The listing; taken again now if older than `max_age` (an editor that just opened)."""
        with self._lock:
            listing = self._listing
            age = time.monotonic() - listing.taken_at if listing is not None else 0.0
            if max_age is not None and age > max_age:
                listing = None
            elif age > LISTING_TTL and not self._refreshing:
                self._refreshing = True
                threading.Thread(target=self._refresh, args=(ignore,), daemon=True,
                                 name="scope-listing").start()
        if listing is None:
            listing = self._refresh(ignore)
        return listing

    def _refresh(self, ignore: IgnoreRules) -> Listing:
        try:
            fresh = list_files(self.root, ignore)
        finally:
            with self._lock:
                self._refreshing = False
        with self._lock:
            if self._listing is None or self._listing.taken_at < fresh.taken_at:
                self._listing = fresh
                self._cache.clear()  # matches were of the old listing
        return fresh

    def preview(self, scope: Sequence[str], base: Sequence[str] | None, ignore: IgnoreRules,
                fold_case: bool, limit: int, max_age: float | None = None,
                paths: Sequence[str] = ()) -> dict[str, Any]:
        started = time.perf_counter()
        listing = self.listing(ignore, max_age)
        with self._lock:
            cache = self._cache if listing is self._listing else OrderedDict()
        key = id(listing)
        wanted = PatternSet(scope, fold_case, cache)
        owned = wanted.owned(listing.files, key)
        before = (PatternSet(base, fold_case, cache).owned(listing.files, key)
                  if base is not None else owned)
        added, removed = owned & ~before, before & ~owned
        files = listing.files
        return {"count": owned.bit_count(), "files": paths_of(files, owned, limit),
                "added_count": added.bit_count(), "added": paths_of(files, added, limit),
                "removed_count": removed.bit_count(), "removed": paths_of(files, removed, limit),
                "total_files": len(files), "listing_truncated": listing.truncated,
                "problems": wanted.problems,
                "owns": owns(paths, scope, base, fold_case),
                "elapsed_ms": round((time.perf_counter() - started) * 1000, 1)}


def owns(paths: Sequence[str], scope: Sequence[str], base: Sequence[str] | None,
         fold_case: bool) -> dict[str, dict[str, bool]]:
    """Whether each path (a file that may not exist yet) is owned before and after the change,
    by the scope stage's own matcher."""
    if not paths:
        return {}
    after, before = _matcher(scope, fold_case), _matcher(base or (), fold_case)
    return {path: {"before": before.matches(path), "after": after.matches(path)}
            for path in paths}


def _matcher(lines: Sequence[str], fold_case: bool) -> PatternList:
    valid = [line for line in lines if not PatternSet([line]).problems]
    return PatternList(valid, fold_case)
