"""Repositories inside the workspace: those a command made, moved out of it; those that were
there, their control files compared and put back as the workspace's own are (git_control).

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

from intentd.daemon.sandbox import git_control

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
    fd = open_folder(root, folders)
    try:
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


def open_folder(root: str, folders: list[str]) -> int:
    """A descriptor of root/folders, reached one folder at a time without following a
    symlink: one swapped for a link cannot turn a move on a folder elsewhere."""
    fd = os.open(root, _DIR)
    try:
        for folder in folders:
            inner = os.open(folder, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def snapshots(root: str, entries: tuple[str, ...]) -> dict[str, git_control.Snapshot]:
    """The control files of each nested repository (its `.git` entry's path: its snapshot)."""
    found = {}
    for rel in entries:
        snapshot = git_control.snapshot_entry(os.path.join(root, rel))
        if snapshot is not None:
            found[rel] = snapshot
    return found


def changes_since(before: dict[str, git_control.Snapshot]) -> list[tuple[str, str]]:
    """(path, added | modified | deleted | replaced) for each control file of a nested
    repository that differs now, named from the workspace (`vendor/lib/.git/config`)."""
    found = []
    for rel, snapshot in before.items():
        folder = rel.removesuffix(".git")
        found += [(folder + path, status) for path, status in git_control.changes_since(snapshot)]
    return found


def put_back(before: dict[str, git_control.Snapshot], paths: list[str],
             keep: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Each path (as changes_since names it) put back as git_control.put_back does, the
    command's versions kept under keep/<the repository's folder>."""
    undone: list[str] = []
    left: list[tuple[str, str]] = []
    for rel, snapshot in before.items():
        folder = rel.removesuffix(".git")
        mine = [p.removeprefix(folder) for p in paths
                if p == rel or p.startswith(rel + "/")]
        if not mine:
            continue
        done, failed = git_control.put_back(snapshot, mine, keep / (folder or "."))
        undone += [folder + p for p in done]
        left += [(folder + p, why) for p, why in failed]
    return undone, left
