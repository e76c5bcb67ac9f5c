"""Files and folders whose names are not UTF-8: no checkpoint can keep one (its manifest holds
UTF-8 names), so no restore brings one back or takes one away. One a command made outside the
scope (`.github/workflows/ci\\xff.yml`, a folder `tools\\xff/` and all in it) is moved out of
the workspace whole, into the audit's own folder, where the person can look.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from intentd.daemon.checkpoints.recorder import storable
from intentd.daemon.sandbox.nested_git import open_folder
from intentd.daemon.utils.staging import name_stem

STRANGE = "names-not-utf8"  # the folder, in the audit's, they are moved to


def shallowest(rel: str) -> str:
    """The path up to its first part that is not UTF-8: what the command made, whole."""
    parts = rel.split("/")
    for index, part in enumerate(parts):
        if not storable(part):
            return "/".join(parts[:index + 1])
    return rel


def move_out(root: str, rel: str, keep: Path) -> str:
    """Move `rel` (a file or a folder) of the workspace at root into keep/STRANGE; where it
    went. Its folders are opened without following a symlink (nested_git.open_folder).
    OSError when it cannot be moved (keep on another file system, say): the caller reports it."""
    *folders, name = rel.split("/")
    fd = open_folder(root, folders)
    try:
        target = keep / STRANGE
        target.mkdir(parents=True, exist_ok=True, mode=0o700)
        moved = target / f"{secrets.token_hex(4)}.{name_stem(name, 200)}"
        os.rename(name, moved, src_dir_fd=fd)
        return str(moved)
    finally:
        os.close(fd)
