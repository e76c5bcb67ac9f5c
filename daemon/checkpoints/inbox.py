"""The inbox: the blobs of small checkpoints, kept as rows of the manifest's database until
upkeep moves them into git as one pack.

A checkpoint writes its manifest rows in one SQLite transaction anyway; a blob's row rides in
it for the cost of a few page writes. A loose object is a new file, and creating a file is the
dearest thing a single-file checkpoint would do (0.2-0.7 ms on some disks, more than all the
rest). Git cannot read the inbox: upkeep empties it when it fills, and closing the store
empties it too, so a store at rest is plain git again."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from .errors import CorruptStore
from .objects import PACK_THRESHOLD, data_sha

# A checkpoint with more blobs than this writes them to git at once, as one pack.
MAX_BLOBS = PACK_THRESHOLD
# Larger blobs go to git at once: reading and hashing them costs more than a file, and each
# would grow the write-ahead log by its size.
MAX_BLOB_BYTES = 256 * 1024
# Upkeep moves the inbox into git from this many rows, or this many compressed bytes: the
# database then never holds more than a few MiB of blobs.
MOVE_BLOBS = 256
MOVE_BYTES = 8 * 2**20

Row = tuple[str, bytes]  # (blob sha, its content compressed)


def fits(contents: Sequence[bytes]) -> bool:
    """Whether a checkpoint's new blobs (their contents) go to the inbox rather than to git."""
    return len(contents) < MAX_BLOBS and all(len(data) <= MAX_BLOB_BYTES for data in contents)


def row(sha: str, data: bytes) -> Row:
    """The row of a blob with this content (sha: its id, data_sha(data))."""
    return sha, zlib.compress(data, 1)


def content(sha: str, packed: bytes, where: str) -> bytes:
    """A row's content, checked against its sha: a damaged row is never restored."""
    try:
        data = zlib.decompress(packed)
    except (zlib.error, TypeError) as exc:
        raise CorruptStore(f"object {sha} in the inbox of {where} is damaged: {exc}") from exc
    if data_sha(data) != sha:
        raise CorruptStore(f"object {sha} in the inbox of {where} is damaged: its content "
                           "does not match its name")
    return data
