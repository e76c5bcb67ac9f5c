"""Warm-up: read and hash every file of a workspace ahead of its first complete checkpoint.

This is the slow part of a first full scan (every byte read), done in the background without the
store's lock, so tool calls go on meanwhile. The checkpoint that follows still scans the workspace
under the lock and trusts a hash only where the file's stat has not changed since it was read.

The daemon keeps what it once allocated (CPython rarely gives memory back), so the warm-up's
peak is the daemon's for good: it lists the tree as one string of names per folder, not a stat
result per file (700 bytes each), and keeps what it read in a packed Known (known.py).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator

from dulwich.objects import Blob

from .ignore import CheckpointIgnore
from .known import Known
from .objects import PACK_CHUNK_BYTES, make_blob
from .recorder import Recorder
from .scan import folders
from .state import lstat

Progress = Callable[[int, int], None]  # (files read, files in all)
PROGRESS_EVERY = 2_000
Listing = list[tuple[str, str]]  # (folder prefix, its files' names joined by "/"), in walk order


def prehash(root: str, rules: CheckpointIgnore, recorder: Recorder, put: Callable[[list[Blob]], object],
            stop: threading.Event, progress: Progress | None = None) -> Known:
    """Every non-ignored file's entry (at seq 0), its content stored through put (in chunks);
    empty when stopped. Entries whose stat cannot vouch for them later (racily new) are left out."""
    listing, total = list_files(root, rules)
    hints = Known()
    waiting: list[Blob] = []
    size = 0
    done = 0
    for rel in _paths(listing):
        if stop.is_set():
            return Known()
        done += 1
        st = lstat(os.path.join(root, rel))
        if st is not None and st.kind in ("file", "link"):
            observed = recorder.observe(rel, st, None, trust_stat=False)
            if observed.data is not None and observed.entry.mtime_ns >= 0:
                hints.set(rel, 0, observed.entry)
                waiting.append(make_blob(observed.data))
                size += len(observed.data)
                if size >= PACK_CHUNK_BYTES:
                    put(waiting)
                    waiting, size = [], 0
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress(done, max(total, done))
    if waiting:
        put(waiting)
    if progress is not None:
        progress(done, done)
    return hints


def _paths(listing: Listing) -> Iterator[str]:
    for prefix, names in listing:
        for name in names.split("/"):
            yield prefix + name


def list_files(root: str, rules: CheckpointIgnore) -> tuple[Listing, int]:
    """The files and symlinks scan() would find, as names per folder, and how many there are.

    The same walk as scan() (scan.folders). No stat is kept (the kind comes from the folder
    listing), so the listing costs about 20 bytes a file.
    """
    listing: Listing = []
    total = 0
    for rel_dir, entries in folders(root, rules, "", rules.root_frame()):
        names: list[str] = []
        for entry in entries:
            try:
                if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    names.append(entry.name)
            except FileNotFoundError:
                continue
        if names:
            listing.append((rel_dir, "/".join(names)))
            total += len(names)
    return listing, total
