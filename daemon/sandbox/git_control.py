"""Git's own control files, which no checkpoint saves (checkpoints never look inside `.git/`):
the repository's config, its local ignore rules and attributes, and its hooks.

A command an agent runs itself, unconfined, could plant a hook or a config entry that runs code
the next time the person uses git, or write `.git/info/exclude` to hide its other changes from
the scope audit. No agent's scope reaches `.git/`, so the audit reads these files before the
command and compares after it; in restore mode it puts back what they were, after keeping the
command's versions in the workspace's state folder.

Every path is opened one folder at a time without following a symlink, relative to the folder
above it, so a swapped folder cannot send a read or a write outside the repository.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from intentd.daemon.utils.reading import read_fd

FILES = ("config", "info/exclude", "info/attributes")
HOOKS = "hooks"
MAX_BYTES = 1 << 20   # a control file larger than this is compared by digest and not put back
MAX_HOOKS = 200       # hooks read; past that, the rest of the folder is compared by name only
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Version:
    """One control file as read: its digest, its mode, and its bytes (None when over the cap)."""

    digest: str
    mode: int
    data: bytes | None


Snapshot = dict[str, Version]  # ".git/<path>" -> the file; a file that is absent is not in it


def snapshot(root: str) -> Snapshot | None:
    """The control files of the repository at root; None when `.git` is not a folder there (no
    repository, or a worktree's link file, whose git folder lies elsewhere)."""
    try:
        git = os.open(os.path.join(root, ".git"), _DIR)
    except OSError:
        return None
    found: Snapshot = {}
    try:
        for rel in FILES:
            folder, _, name = rel.rpartition("/")
            version = _read(git, folder, name)
            if version is not None:
                found[f".git/{rel}"] = version
        # git runs a hook by its exact name only: `pre-commit.sample` never runs
        for name in [n for n in _names(git, HOOKS) if not n.endswith(".sample")][:MAX_HOOKS]:
            version = _read(git, HOOKS, name)
            if version is not None:
                found[f".git/{HOOKS}/{name}"] = version
    finally:
        os.close(git)
    return found


def changes(before: Snapshot, now: Snapshot) -> list[tuple[str, str]]:
    """(path, added | modified | deleted) for each control file that differs."""
    found = [(p, "deleted") for p in before if p not in now]
    found += [(p, "added") for p in now if p not in before]
    found += [(p, "modified") for p, v in now.items()
              if p in before and (v.digest, v.mode) != (before[p].digest, before[p].mode)]
    return sorted(found)


def put_back(root: str, before: Snapshot, paths: list[str],
             keep: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Each path back to its version in `before` (removed when it had none), once the version
    the command left is copied under `keep`. Returns (undone, left with why)."""
    undone: list[str] = []
    left: list[tuple[str, str]] = []
    for path in paths:
        folder, _, name = path.removeprefix(".git/").rpartition("/")
        old = before.get(path)
        if old is not None and old.data is None:
            left.append((path, f"over {MAX_BYTES} bytes before the command: not kept, so not "
                               "put back"))
            continue
        try:
            _keep_current(root, folder, name, keep / path)
            _write_or_remove(root, folder, name, old)
        except OSError as exc:
            left.append((path, f"could not be put back: {exc.strerror or exc}"))
            continue
        undone.append(path)
    return undone, left


# -- reading and writing inside .git, one folder at a time -------------------------------------

def _open_folder(git: int, folder: str) -> int:
    """A descriptor of .git/<folder> (folder "" is .git itself, duplicated)."""
    fd = os.dup(git)
    for part in filter(None, folder.split("/")):
        try:
            inner = os.open(part, _DIR, dir_fd=fd)
        finally:
            os.close(fd)
        fd = inner
    return fd


def _names(git: int, folder: str) -> list[str]:
    try:
        fd = _open_folder(git, folder)
    except OSError:
        return []
    try:
        return sorted(os.listdir(fd))
    finally:
        os.close(fd)


def _read(git: int, folder: str, name: str) -> Version | None:
    """The regular file .git/<folder>/<name>, or None when it is absent or not a regular file
    (a symlink or a FIFO is never followed or read)."""
    try:
        fd = _open_folder(git, folder)
    except OSError:
        return None
    try:
        file = os.open(name, _FILE, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        st = os.fstat(file)
        if not stat.S_ISREG(st.st_mode):
            return None
        data = read_fd(file, st.st_size, MAX_BYTES + 1)
    finally:
        os.close(file)
    digest = hashlib.sha256(data).hexdigest()
    return Version(digest, stat.S_IMODE(st.st_mode), data if len(data) <= MAX_BYTES else None)


def _keep_current(root: str, folder: str, name: str, target: Path) -> None:
    git = os.open(os.path.join(root, ".git"), _DIR)
    try:
        current = _read(git, folder, name)
    finally:
        os.close(git)
    if current is None or current.data is None:
        return  # nothing there, or too big to copy: it is named, and left where it is below
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        _write_all(fd, current.data)
    finally:
        os.close(fd)


def _write_or_remove(root: str, folder: str, name: str, old: Version | None) -> None:
    git = os.open(os.path.join(root, ".git"), _DIR)
    try:
        fd = _open_folder(git, folder)
    finally:
        os.close(git)
    try:
        if old is None:
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            return
        assert old.data is not None
        temp = f".{name}.intentd-put-back"
        out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                      old.mode, dir_fd=fd)
        try:
            _write_all(out, old.data)
            os.fchmod(out, old.mode)
        finally:
            os.close(out)
        os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
