"""Files and folders whose names are not UTF-8: no checkpoint can keep one (its manifest holds
UTF-8 names), so no restore brings one back or takes one away. One a command made outside the
scope (`.github/workflows/ci\\xff.yml`, a folder `tools\\xff/` and all in it) is moved out of
the workspace whole, into the audit's own folder, where the person can look.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

# O_PATH: a folder the command made unreadable still takes a rename
_DIR = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
STRANGE = "names-not-utf8"  # the folder, in the audit's, they are moved to


def is_strange(rel: str) -> bool:
    """Whether a workspace path has a part that is not UTF-8 (decoded as surrogates)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shallowest(rel: str) -> str:
    """The path up to its first part that is not UTF-8: what the command made, whole."""
    parts = rel.split("/")
    for index, part in enumerate(parts):
        if is_strange(part):
            return "/".join(parts[:index + 1])
    return rel


def move_out(root: str, rel: str, keep: Path) -> str:
    """Move `rel` (a file or a folder) of the workspace at root into keep/STRANGE; where it
    went. Its folders are opened one at a time without following a symlink, so one swapped for
    a link cannot turn the move on a file elsewhere. OSError when it cannot be moved (keep on
    another file system, say): the caller reports it."""
    *folders, name = rel.split("/")
    fd = os.open(root, _DIR)
    try:
        for folder in folders:
            inner = os.open(folder, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        target = keep / STRANGE
        target.mkdir(parents=True, exist_ok=True, mode=0o700)
        stem = os.fsdecode(os.fsencode(name)[:200])  # the name's own bytes, within 255 in all
        moved = target / f"{secrets.token_hex(4)}.{stem}"
        os.rename(name, moved, src_dir_fd=fd)
        return str(moved)
    finally:
        os.close(fd)
