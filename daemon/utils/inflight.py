"""The temporary files intentd's own writes are using at this moment.

A file tool writes a temporary file beside its target and renames it over the target. A
checkpoint that lists the folder in between (the warm-up's baseline, a command's full scan)
would record the temporary file, which is gone a moment later, and show it in every diff and
restore since. Its path (folder and random name) is registered here before the file exists, so
checkpoints leave exactly these files out: an agent that reads the name and makes a file of the
same name in another folder hides nothing.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

PREFIX, SUFFIX = ".intentd-", ".tmp"
_paths: set[str] = set()  # a set's add, discard and lookup are atomic under the interpreter lock


@contextmanager
def temporary_name(folder: str) -> Iterator[str]:
    """A fresh temporary file name in `folder` (an absolute path), counted as intentd's own
    while the block runs."""
    name = f"{PREFIX}{secrets.token_hex(8)}{SUFFIX}"
    path = os.path.join(folder, name)
    _paths.add(path)
    try:
        yield name
    finally:
        _paths.discard(path)


def under_way() -> bool:
    """Whether any write of intentd's is under way (so that a caller asks is_ours at all)."""
    return bool(_paths)


def is_ours(path: str) -> bool:
    """Whether an absolute path is the temporary file of a write of intentd's under way."""
    return path in _paths
