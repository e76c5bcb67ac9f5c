"""The temporary files intentd's own writes are using at this moment.

A file tool writes a temporary file beside its target and renames it over the target. A
checkpoint that lists the folder in between (the warm-up's baseline, a command's full scan)
would record the temporary file, which is gone a moment later, and show it in every diff and
restore since. Its name is random and registered here before the file exists, so checkpoints
leave exactly these files out, and no name an agent picks.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

PREFIX, SUFFIX = ".intentd-", ".tmp"
_names: set[str] = set()  # a set's add, discard and lookup are atomic under the interpreter lock


@contextmanager
def temporary_name() -> Iterator[str]:
    """A fresh temporary file name, counted as intentd's own while the block runs."""
    name = f"{PREFIX}{secrets.token_hex(8)}{SUFFIX}"
    _names.add(name)
    try:
        yield name
    finally:
        _names.discard(name)


def is_ours(name: str) -> bool:
    """Whether a file name (not a path) is a temporary file of a write of intentd's under way."""
    return name in _names
