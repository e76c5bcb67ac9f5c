"""Folders put in place whole, which a stat cache cannot vouch for.

A btrfs or bcachefs subvolume put in place by a snapshot, or renamed into place, keeps its files'
inode numbers and change times, and its device number may be one that a removed subvolume had.
An agent can so snapshot src/ into an ignored folder, edit the copy in disguise (same size, mtime
set back), wait until its ctime is older than the last checkpoint, and put it over src/: every
file would match its stat cache entry. Only the folder it was put into shows the change (its
ctime). So a scan treats every file beneath a folder on another device than its parent as
changed when that parent changed since the last checkpoint that covered the workspace. The
native lister does this in C (_listing.c); find and the Python walk use what is here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

FILESYSTEMS = frozenset({"btrfs", "bcachefs"})  # where a user can make and snapshot subvolumes
_ESCAPE = re.compile(r"\\([0-7]{3})")  # mountinfo writes a space in a path as \040


def possible(root: str) -> bool:
    """Whether a folder of root may be a subvolume: root is on btrfs or bcachefs, or such a file
    system is mounted below it. True when /proc/self/mountinfo cannot tell."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return True
    root = root.rstrip("/") or "/"
    holder, holder_type, kinds = "", "", set()
    for line in lines:
        fields = line.split()
        try:
            point, kind = _unescape(fields[4]), fields[fields.index("-", 6) + 1]
        except (IndexError, ValueError):
            return True
        if point == root or root.startswith(point.rstrip("/") + "/"):
            if len(point) >= len(holder):  # the deepest mount holding root; a later one is on top
                holder, holder_type = point, kind
        elif point.startswith(root + "/"):
            kinds.add(kind)
    return bool(FILESYSTEMS & {holder_type, *kinds})


def root_put_in(root: str, recent_ns: int) -> bool:
    """Whether root itself is on another device than its parent, which changed at or after
    recent_ns (the workspace may be a subvolume put in place). True when either cannot be
    looked at."""
    try:
        here, parent = os.stat(root), os.stat(os.path.join(root, ".."))
    except OSError:
        return True
    return here.st_dev != parent.st_dev and parent.st_ctime_ns >= recent_ns


def put_in(folders: Iterable[tuple[str, int, int]], parents: dict[str, tuple[int, int]],
           recent_ns: int) -> list[str]:
    """Of folders, (relative path, st_dev, st_ctime_ns) with every folder after its parent, those
    on another device than their parent where the parent changed at or after recent_ns.
    `parents` holds (st_dev, st_ctime_ns) of the folders above the first ones ("" for root)."""
    seen = dict(parents)
    found = []
    for rel, dev, ctime in folders:
        seen[rel] = (dev, ctime)
        parent = seen.get(rel.rpartition("/")[0])
        if parent is None or (dev != parent[0] and parent[1] >= recent_ns):
            found.append(rel)  # a parent not seen cannot vouch for it
    return found


def under(paths: list[str]) -> tuple[str, ...]:
    """Prefixes for str.startswith: what lies beneath these folders."""
    return tuple(path + "/" for path in paths)


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m[1], 8)), text)
