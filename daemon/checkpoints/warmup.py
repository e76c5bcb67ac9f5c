"""Warm-up: read and hash every file of a workspace ahead of its first complete checkpoint.

This is the slow part of a first full scan (every byte read), done in the background without the
store's lock, so tool calls go on meanwhile. The checkpoint that follows still scans the workspace
under the lock and trusts a hash only where the file's stat has not changed since it was read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from dulwich.objects import Blob

from .ignore import CheckpointIgnore
from .objects import PACK_CHUNK_BYTES, make_blob
from .recorder import Recorder
from .scan import scan
from .state import Entry, to_disk_stat

Progress = Callable[[int, int], None]  # (files read, files in all)
PROGRESS_EVERY = 2_000


def prehash(root: str, rules: CheckpointIgnore, recorder: Recorder, put: Callable[[list[Blob]], object],
            stop: threading.Event, progress: Progress | None = None) -> dict[str, Entry]:
    """Every non-ignored file's entry, its content stored through put (in chunks); empty when
    stopped. Entries whose stat cannot vouch for them later (racily new) are left out."""
    found = scan(root, rules).files
    total, hints = len(found), {}
    waiting: list[Blob] = []
    size = 0
    for done, (rel, raw) in enumerate(found.items(), 1):
        if stop.is_set():
            return {}
        observed = recorder.observe(rel, to_disk_stat(raw), None, trust_stat=False)
        if observed.data is not None and observed.entry.mtime_ns >= 0:
            hints[rel] = observed.entry
            waiting.append(make_blob(observed.data))
            size += len(observed.data)
            if size >= PACK_CHUNK_BYTES:
                put(waiting)
                waiting, size = [], 0
        if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
            progress(done, total)
    if waiting:
        put(waiting)
    return hints
