"""Scope previews: which of the workspace's files a list of globs owns now, and what a change to the
list adds or removes. Decided as daemon/policy/globs.py decides one path, for all files at once."""

from __future__ import annotations

import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from intentd.daemon.policy.globs import DIR_MARK, fold
from intentd.daemon.policy.ignore import IgnoreRules

LISTING_TTL = 2.0        # a preview may be this many seconds behind the disk: typing stays fast
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
    if ignore.patterns:
        hidden = PatternSet(ignore.patterns, ignore.fold_case).owned(found)
        found = [f for f in found if f not in hidden]
    return Listing(tuple(sorted(found)), len(found) >= MAX_FILES, time.monotonic())


class PatternSet:
    """Gitignore-style lines matched against many paths: each line is one regex pass over them."""

    def __init__(self, lines: Sequence[str], fold_case: bool = False,
                 cache: OrderedDict[Any, tuple[frozenset[str], frozenset[str]]] | None = None,
                 ) -> None:
        self.fold_case = fold_case
        self.cache = cache if cache is not None else OrderedDict()
        self.patterns: list[tuple[str, str, bool]] = []  # (line, regex, include)
        self.problems: list[dict[str, Any]] = []
        for number, line in enumerate(lines, 1):
            try:
                source, include = GitIgnoreSpecPattern.pattern_to_regex(
                    fold(line) if fold_case else line)
            except ValueError as exc:  # a line that is no pattern, such as a lone `!`
                self.problems.append({"line": number, "glob": line, "message": str(exc)})
                continue
            if source is not None and include is not None:
                self.patterns.append((line, source, include))

    def owned(self, files: Sequence[str], key: Any = None) -> frozenset[str]:
        """The files the lines own: the last line that matches a file as a file decides; if
        none does, the last that matches it through a folder (as PatternList.matches)."""
        decided: set[str] = set()
        owned: set[str] = set()
        by_folder: list[tuple[frozenset[str], bool]] = []
        for _line, source, include in reversed(self.patterns):
            as_file, through_folder = self._hits(source, files, key)
            fresh = as_file - decided
            decided |= fresh
            if include:
                owned |= fresh
            by_folder.append((through_folder, include))
        folder_decided: set[str] = set(decided)
        for hits, include in by_folder:
            fresh = hits - folder_decided
            folder_decided |= fresh
            if include:
                owned |= fresh
        return frozenset(owned)

    def _hits(self, source: str, files: Sequence[str],
              key: Any) -> tuple[frozenset[str], frozenset[str]]:
        cache_key = (key, source, self.fold_case)
        if key is not None and cache_key in self.cache:
            self.cache.move_to_end(cache_key)
            return self.cache[cache_key]
        search = re.compile(source).search
        as_file: list[str] = []
        through_folder: list[str] = []
        paths = [fold(f) for f in files] if self.fold_case else files
        for original, path in zip(files, paths, strict=True):
            found = search(path)
            if found is not None:
                (through_folder if found.groupdict().get(DIR_MARK) else as_file).append(original)
        hits = (frozenset(as_file), frozenset(through_folder))
        if key is not None:
            self.cache[cache_key] = hits
            while len(self.cache) > PATTERN_CACHE:
                self.cache.popitem(last=False)
        return hits


class ScopePreviewer:
    """One per workspace: the file listing (refreshed when older than LISTING_TTL) and the
    per-line matches, so a keystroke costs one regex pass over the files."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._listing: Listing | None = None
        self._cache: OrderedDict[Any, tuple[frozenset[str], frozenset[str]]] = OrderedDict()

    def listing(self, ignore: IgnoreRules) -> Listing:
        with self._lock:
            if self._listing is None or time.monotonic() - self._listing.taken_at > LISTING_TTL:
                self._listing = list_files(self.root, ignore)
                self._cache.clear()
            return self._listing

    def preview(self, scope: Sequence[str], base: Sequence[str] | None, ignore: IgnoreRules,
                fold_case: bool, limit: int) -> dict[str, Any]:
        started = time.perf_counter()
        listing = self.listing(ignore)
        with self._lock:
            key = id(listing)  # a new listing starts a new cache
            wanted = PatternSet(scope, fold_case, self._cache)
            owned = wanted.owned(listing.files, key)
            before = (PatternSet(base, fold_case, self._cache).owned(listing.files, key)
                      if base is not None else owned)
        added, removed = sorted(owned - before), sorted(before - owned)
        return {"count": len(owned), "files": sorted(owned)[:limit],
                "added_count": len(added), "added": added[:limit],
                "removed_count": len(removed), "removed": removed[:limit],
                "total_files": len(listing.files), "listing_truncated": listing.truncated,
                "problems": wanted.problems,
                "elapsed_ms": round((time.perf_counter() - started) * 1000, 1)}
