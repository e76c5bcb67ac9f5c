"""The records of a tree that the full-scan fallback compares (see walk.py): listed in C by the
native lister where it was built, else by GNU find, which prints the same records.

A record is "type size mode mtime inode ./path" (a folder's is "d 0 0 0 ./path"), and a folder's
contents come right after it. Given recent_ns, the record of a non-folder whose inode changed
(ctime) at or after it starts with "+" (see walk.py).

The native lister (_listing.c) is built at install where a C compiler is found, on Linux only.
It lists the tree with about half the system calls of find: a folder costs an openat, its
getdents64 calls and a close, and is never stat'ed; a file costs one fstatat. Where it is
missing, or fails (out of file descriptors, say), GNU find lists instead; where neither can,
list_records returns None and the caller walks in Python.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from functools import cache
from types import ModuleType

from . import subvolumes

native: ModuleType | None
try:
    from . import _listing as native
except ImportError:  # not built: no C compiler at install, or not Linux
    native = None

# find's -printf formats for the same records: the fields walk.expected() gives, then the path.
PRINTF = "%y %s %m %T@ %i %p\\0"
RECENT_PRINTF = "+" + PRINTF
FOLDER_PRINTF = "d 0 0 0 %p\\0"  # no size or mtime: adding a file leaves its folder's record alone
UNLISTABLE_PRINTF = "u 0 0 0 %p\\0"  # what changed: a folder that cannot be listed
NAMED_PRINTF = "n 0 0 0 %p\\0"  # what changed: a folder left out by its name (*/NAME); not %y's p, a FIFO
FOLDER_DEVICE_PRINTF = "%D %C@ %p\\0"  # a folder's device and change time (subvolumes.py)
MAX_JOBS = 4
_GLOB_CHARS = re.compile(r"([*?\[\]\\])")


@cache
def gnu_find() -> str | None:
    """The path of a find that has -printf, or None."""
    program = shutil.which("find")
    if program is None:
        return None
    try:
        done = subprocess.run([program, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return program if b"GNU findutils" in done.stdout else None


def lister() -> str | None:
    """What list_records lists with: "native", "find", or None (nothing: the caller walks in
    Python)."""
    if native is not None:
        return "native"
    return "find" if gnu_find() is not None else None


def list_records(root: str, names: Sequence[str], pruned: Sequence[str],
                 changed_since_ns: int | None = None,
                 recent_ns: int | None = None) -> list[str] | None:
    """The records of the top-level entries `names` of root and of everything beneath them, in
    pre-order; entries named .git and the folders in `pruned` (relative paths) are left out with
    their contents. With changed_since_ns, only the records of non-folders whose inode changed
    (ctime) at or after it, "u 0 0 0 ./PATH" for each folder that cannot be listed, and
    "n 0 0 0 ./PATH" for each left out by a `pruned` entry "*/NAME" (every folder so named).
    Without it but with recent_ns, the records of non-folders whose inode changed at or after
    recent_ns start with "+". None when no lister could list the tree whole.

    The names are shared among one lister per CPU (at most MAX_JOBS), run at once: listing is
    mostly stat calls, which git's preloaded index also spreads over the CPUs. Each entry's
    subtree still comes whole and in order from one of them.
    """
    if not names:
        return []
    jobs = max(1, min(os.cpu_count() or 1, MAX_JOBS, len(names)))
    shares = [list(names[i::jobs]) for i in range(jobs)]
    if native is not None:
        since = -1 if changed_since_ns is None else max(0, changed_since_ns)
        recent = -1 if recent_ns is None else max(0, recent_ns)
        records = _gather([_native_run(root, share, list(pruned), since, recent)
                           for share in shares])
        if records is not None:
            return records
    program = gnu_find()
    if program is None:
        return None
    prune = ["-name", ".git"]
    for folder in sorted(p for p in pruned if not p.startswith("*/")):
        prune += ["-o", "-path", "./" + _GLOB_CHARS.sub(r"\\\1", folder)]
    by_name: list[str] = []
    for name in sorted(p[2:] for p in pruned if p.startswith("*/")):
        by_name += ["-o", "-name", _GLOB_CHARS.sub(r"\\\1", name)] if by_name else [
            "-name", _GLOB_CHARS.sub(r"\\\1", name)]
    if changed_since_ns is None:
        marked = ([*_changed_at_or_after(recent_ns), "-printf", RECENT_PRINTF, "-o"]
                  if recent_ns is not None else [])
        select = ["-type", "d", "-printf", FOLDER_PRINTF, "-o", *marked, "-printf", PRINTF]
    else:
        named = (["-type", "d", "(", *by_name, ")", "-printf", NAMED_PRINTF, "-prune", "-o"]
                 if by_name else [])
        select = [*named, "-type", "d", "!", "-readable", "-printf", UNLISTABLE_PRINTF, "-o",
                  "-type", "d", "-o", *_changed_at_or_after(changed_since_ns), "-printf", PRINTF]

    def find(*selected: str) -> list[str] | None:
        return _gather([_find_run([program, *("./" + n for n in share), "(", *prune, ")",
                                   "-prune", "-o", *selected], root) for share in shares])

    records = find(*select)
    if records is None or recent_ns is None or changed_since_ns is not None:
        return records
    if not subvolumes.possible(root):
        return records
    folders = find("-type", "d", "-printf", FOLDER_DEVICE_PRINTF)
    put_in = _put_in(root, folders, recent_ns) if folders is not None else None
    if put_in is None:
        return None
    return _marked(records, subvolumes.under(put_in)) if put_in else records


def _put_in(root: str, folders: list[str], recent_ns: int) -> list[str] | None:
    """subvolumes.put_in of find's FOLDER_DEVICE_PRINTF records; None if root cannot be seen."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    seen = []
    for record in folders:
        device, changed, rel = record.split(" ", 2)
        seconds, _, fraction = changed.partition(".")
        seen.append((rel[2:], int(device), int(seconds) * 1_000_000_000 + int(f"{fraction:0<9}"[:9])))
    return subvolumes.put_in(seen, {"": (st.st_dev, st.st_ctime_ns)}, recent_ns)


def _marked(records: list[str], put_in: tuple[str, ...]) -> list[str]:
    """The records of non-folders beneath these folders marked recent, as the native lister
    marks them."""
    return ["+" + record if record[:1] not in ("+", "d") and
            record.partition(" ./")[2].startswith(put_in) else record for record in records]


def _changed_at_or_after(ns: int) -> list[str]:
    """find's test for an inode changed at or after ns: -newer is strictly after, so one
    nanosecond earlier."""
    seconds, nanos = divmod(max(0, ns - 1), 1_000_000_000)
    return ["-newerct", f"@{seconds}.{nanos:09d}"]


def _native_run(root: str, names: list[str], pruned: list[str],
                since: int, recent: int) -> Callable[[], bytes | None]:
    assert native is not None

    def run() -> bytes | None:
        try:
            listed: bytes = native.listing(root, names, pruned, since, recent)  # without the GIL
        except OSError:
            return None
        return listed

    return run


def _find_run(command: list[str], cwd: str) -> Callable[[], bytes | None]:
    def run() -> bytes | None:
        try:
            done = subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"},
                                  check=False)
        except OSError:
            return None
        # exit status 1: some folder could not be read, which scan() skips too
        return done.stdout if done.returncode in (0, 1) else None

    return run


def _gather(runs: list[Callable[[], bytes | None]]) -> list[str] | None:
    """Run each on a thread of its own, all at once; their records in the order of runs, or None
    when any failed."""
    listed: list[bytes | None] = [None] * len(runs)

    def one(i: int) -> None:
        listed[i] = runs[i]()

    threads = [threading.Thread(target=one, args=(i,), name="intentd-listing", daemon=True)
               for i in range(len(runs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records: list[str] = []
    for data in listed:
        if data is None:
            return None
        share = os.fsdecode(data).split("\0")
        share.pop()  # after the last separator
        records += share
    return records
