"""What the store knows about one path at one checkpoint, and how a path looks on disk now."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Literal, NamedTuple

EntryKind = Literal["file", "link", "absent", "skipped"]
# Inode numbers are kept as SQLite keeps integers, signed 64-bit: one past 2**63 (some
# overlay file systems make them) as its two's complement; `& INO_BITS` gives it back.
INO_BITS = 2**64 - 1
DiskKind = Literal["file", "link", "dir", "other"]


class Entry(NamedTuple):
    """A path's recorded state: file or symlink content (blob sha), absent, or skipped (why in note).

    size, mtime_ns and ino are a stat cache used to spot unchanged files without reading them;
    mtime_ns is -1 when the file was changing while recorded, so it is re-read next time. ino (the
    inode number, 0: not known) tells a file from a copy put in its place, which size and times
    set back can make look the same: a folder renamed over another moves its files unchanged.
    A named tuple, not a dataclass: the store decodes one on every lookup of its packed known
    state (known.py), and a tuple is made in a fraction of the time.
    """

    kind: EntryKind
    sha: str = ""
    perm: int = 0
    size: int = -1
    mtime_ns: int = -1
    note: str = ""
    ino: int = 0

    def same_state(self, other: Entry) -> bool:
        """True when both describe the same content and permissions (ignoring the stat cache)."""
        if self.kind != other.kind:
            return False
        if self.kind == "skipped":
            return (self.size, self.mtime_ns, self.perm) == (other.size, other.mtime_ns, other.perm)
        return (self.sha, self.perm) == (other.sha, other.perm)

    @property
    def present(self) -> bool:
        return self.kind != "absent"


ABSENT = Entry("absent")


@dataclass(frozen=True, slots=True)
class DiskStat:
    """The lstat of a workspace path, reduced to what checkpoints compare."""

    kind: DiskKind
    size: int
    mtime_ns: int
    ctime_ns: int
    perm: int
    ino: int = 0

    def matches(self, entry: Entry) -> bool:
        """True when the stat cache says the recorded entry still describes this path."""
        if entry.mtime_ns < 0 or entry.kind not in ("file", "link", "skipped"):
            return False
        kind = "file" if entry.kind == "skipped" else entry.kind
        return (self.kind, self.size, self.mtime_ns, self.perm, self.ino) == (
            kind, entry.size, entry.mtime_ns, entry.perm, entry.ino,
        )


def to_disk_stat(st: os.stat_result) -> DiskStat:
    """Reduce an lstat result; symlinks get perm 0 since their mode means nothing."""
    mode = st.st_mode
    kind: DiskKind
    if stat.S_ISREG(mode):
        kind = "file"
    elif stat.S_ISLNK(mode):
        kind = "link"
    elif stat.S_ISDIR(mode):
        kind = "dir"
    else:
        kind = "other"
    perm = stat.S_IMODE(mode) if kind == "file" else 0
    ino = st.st_ino
    return DiskStat(kind, st.st_size, st.st_mtime_ns, st.st_ctime_ns, perm,
                    ino - 2**64 if ino >= 2**63 else ino)


def lstat(path: str) -> DiskStat | None:
    """The path's DiskStat, or None when nothing is there (or a parent is not a directory)."""
    try:
        return to_disk_stat(os.lstat(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def stat_matches(st: os.stat_result, entry: Entry) -> bool:
    """DiskStat.matches on a raw lstat result, for the full scan's hot loop."""
    if (entry.mtime_ns < 0 or st.st_mtime_ns != entry.mtime_ns or st.st_size != entry.size
            or st.st_ino != entry.ino & INO_BITS):
        return False
    if entry.kind == "link":
        return stat.S_ISLNK(st.st_mode)
    return entry.kind in ("file", "skipped") and stat.S_ISREG(st.st_mode) and (
        stat.S_IMODE(st.st_mode) == entry.perm)
