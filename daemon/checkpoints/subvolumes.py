"""Folders put in place whole, which a stat cache cannot vouch for.

A btrfs or bcachefs subvolume put in place by a snapshot, or renamed into place, keeps its files'
inode numbers and change times, and its device number may be one that a removed subvolume had.
An agent can so snapshot src/ into an ignored folder, edit the copy in disguise (same size, mtime
set back), wait until its ctime is older than the last checkpoint, and put it over src/ (or put
a folder holding it over one of src/'s parents): every file would match its stat cache entry.
Only the folders above it show the change (their ctime). So a scan treats every file beneath a
folder on another device than its parent as changed when any folder above it, up to the
workspace, changed since the last checkpoint that covered the workspace. The native lister does
this in C (_listing.c); find and the Python walk use what is here. The workspace itself, inside
a subvolume put back whole, keeps its device number and inode but not its subvolume's id, which
the store checks (subvolume_id).
"""

from __future__ import annotations

import ctypes
import os
import re
import struct
from collections.abc import Iterable
from functools import cache

FILESYSTEMS = frozenset({"btrfs", "bcachefs"})  # where a user can make and snapshot subvolumes
_ESCAPE = re.compile(r"\\([0-7]{3})")  # mountinfo writes a space in a path as \040
_AT_FDCWD, _AT_SYMLINK_NOFOLLOW = -100, 0x100
_STATX_SUBVOL = 0x8000  # Linux 6.10+: the id of the subvolume a file is in (btrfs, bcachefs)
_STATX_SUBVOL_AT = 160  # the offset of stx_subvol in struct statx


def possible(root: str) -> bool:
    """Whether a folder of root may be a subvolume: root is on btrfs or bcachefs, or such a file
    system is mounted below it. True when /proc/self/mountinfo cannot tell."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return True
    root = os.path.realpath(root).rstrip("/") or "/"  # mountinfo names mount points resolved
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
    on another device than their parent where a folder above changed at or after recent_ns.
    `parents` holds, for the folder above the first ones ("" for root), its st_dev and the
    newest st_ctime_ns of it and the folders above it up to the workspace (ancestry)."""
    seen = dict(parents)  # folder: (st_dev, the newest ctime from the workspace down to it)
    found = []
    for rel, dev, ctime in folders:
        if not rel:  # the workspace itself: root_put_in judges it
            seen[rel] = (dev, ctime)
            continue
        parent = seen.get(rel.rpartition("/")[0])
        if parent is None or (dev != parent[0] and parent[1] >= recent_ns):
            found.append(rel)  # a parent not seen cannot vouch for it
        seen[rel] = (dev, max(ctime, parent[1]) if parent is not None else ctime)
    return found


def under(paths: list[str]) -> tuple[str, ...]:
    """Prefixes for str.startswith: what lies beneath these folders."""
    return tuple(path + "/" for path in paths)


def ancestry(root: str, folder: str) -> tuple[int, int] | None:
    """The st_dev of `folder` (relative, "" for root) and the newest st_ctime_ns of it and the
    folders above it up to root, for put_in's `parents`; None when one cannot be lstat'ed."""
    newest, path, dev = 0, root, 0
    for part in ["", *filter(None, folder.split("/"))]:
        path = os.path.join(path, part) if part else path
        try:  # root's own path may be a symlink to it
            st = os.lstat(path) if part else os.stat(path)
        except OSError:
            return None
        newest, dev = max(newest, st.st_ctime_ns), st.st_dev
    return dev, newest


def subvolume_id(path: str) -> int | None:
    """The id of the btrfs or bcachefs subvolume holding path (statx STATX_SUBVOL, Linux 6.10+);
    None elsewhere, or where it cannot be asked."""
    statx = getattr(_libc(), "statx", None)
    if statx is None:
        return None
    buffer = ctypes.create_string_buffer(256)
    if statx(_AT_FDCWD, os.fsencode(path), _AT_SYMLINK_NOFOLLOW, _STATX_SUBVOL, buffer) != 0:
        return None
    if not struct.unpack_from("I", buffer, 0)[0] & _STATX_SUBVOL:
        return None
    return int(struct.unpack_from("Q", buffer, _STATX_SUBVOL_AT)[0])


@cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m[1], 8)), text)
