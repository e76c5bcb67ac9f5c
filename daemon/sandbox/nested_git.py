"""Repositories a command made inside the workspace, moved out of it.

A `.git` folder (or a `.git` file naming one) anywhere in the workspace makes its folder a
repository, and git run there (by the person, or by an editor that opens every repository it
finds) reads that folder's config and hooks: `core.fsmonitor` or a hook runs what the agent
wrote. No agent writes any `.git/`, so the scope audit moves each one a command made out of the
workspace into the audit's own folder, where nothing runs it and the person can look.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
from pathlib import Path

# O_PATH: a folder the command made unreadable (mode 0311) still takes a rename, as git still
# finds the repository in it
_DIR = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NESTED = "repositories"  # the folder, in the audit's, the moved `.git` entries go to
MAX_LABEL = 200  # bytes of a repository's folder path kept in its moved name (else a hash)


def move_out(root: str, rel: str, keep: Path) -> str:
    """Move the `.git` entry `rel` of the workspace at root into keep/NESTED; where it went.
    Its folders are opened one at a time without following a symlink, so one swapped for a
    link cannot turn the move on a repository elsewhere. Where the audit's folder is on
    another file system, it is renamed in place instead, to a name git never reads."""
    *folders, name = rel.split("/")
    if name != ".git":
        raise ValueError(f"not a .git entry: {rel!r}")
    fd = os.open(root, _DIR)
    try:
        for folder in folders:
            inner = os.open(folder, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        target = keep / NESTED
        target.mkdir(parents=True, exist_ok=True, mode=0o700)
        label = "%2F".join(folders) or "(root)"
        if len(os.fsencode(label)) > MAX_LABEL:  # a name must stay under 255 bytes
            label = hashlib.sha256(os.fsencode(label)).hexdigest()[:16]
        moved = target / f"{label}.{secrets.token_hex(4)}.git"
        try:
            os.rename(name, moved, src_dir_fd=fd)
            return str(moved)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        aside = f".git.intentd-kept-{secrets.token_hex(4)}"
        os.rename(name, aside, src_dir_fd=fd, dst_dir_fd=fd)
        return os.path.join(root, *folders, aside)
    finally:
        os.close(fd)
