"""Git's own control files, which no checkpoint saves (checkpoints never look inside `.git/`):
the repository's config, its local ignore rules and attributes, and its hooks.

A command an agent runs itself, unconfined, could plant a hook or a config entry that runs code
the next time the person uses git, or write `.git/info/exclude` to hide its other changes from
the scope audit. No agent's scope reaches `.git/`, so the audit reads these files before the
command and compares after it; in restore mode it puts back what they were, after keeping the
command's versions in the workspace's state folder.

The git folder is found as git finds it: `.git` in the workspace or the nearest folder above it
(a workspace may be a sub-folder of a repository), and when `.git` is a file (a linked worktree,
a submodule) the folder it names, or for a worktree the repository's common folder, where git
reads hooks and config. It is found once, before the command; the reads after it and the
put-back go to that same folder (checked by device and inode), so a command that swaps the link
or the folder cannot send them elsewhere. Inside it every path is opened one folder at a time
without following a symlink, relative to the folder above it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from intentd.daemon.utils.reading import read_fd

FILES = ("config", "info/exclude", "info/attributes")
HOOKS = "hooks"
MAX_BYTES = 1 << 20   # a control file larger than this is compared by digest and not put back
MAX_HOOKS = 200       # hooks read; past that, the rest of the folder is compared by name only
MAX_LINK = 4096       # a `.git` link file or a `commondir` longer than this is not one
REPLACED = ".git"     # the one change named when the git folder itself was moved or replaced
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Version:
    """One control file as read: its digest, its mode, and its bytes (None when over the cap)."""

    digest: str
    mode: int
    data: bytes | None


Files = dict[str, Version]  # ".git/<path>" -> the file; a file that is absent is not in it


@dataclass(frozen=True)
class Snapshot:
    """The control files of one git folder, as read before a command."""

    folder: str                    # the git folder's real path
    identity: tuple[int, int]      # its (device, inode): later reads must find the same folder
    files: Files = field(default_factory=dict)


def find_folder(root: str) -> str | None:
    """The real path of the git folder whose hooks and config apply to the workspace at root,
    or None when it is in no repository."""
    here = os.path.realpath(root)
    try:
        device = os.stat(here).st_dev
    except OSError:
        return None
    while True:
        dot_git = os.path.join(here, ".git")
        try:
            st = os.stat(dot_git)
        except OSError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                return _git_folder(os.path.realpath(dot_git))
            if stat.S_ISREG(st.st_mode):
                return _linked_folder(here, dot_git)
            return None
        above = os.path.dirname(here)
        try:
            if above == here or os.stat(above).st_dev != device:
                return None  # git stops at the top, and at another file system
        except OSError:
            return None
        here = above


def _linked_folder(here: str, link: str) -> str | None:
    """The folder a `.git` file names (`gitdir: PATH`), or its common folder for a worktree."""
    text = _small_text(link)
    if text is None or not text.startswith("gitdir:"):
        return None
    named = os.path.realpath(os.path.join(here, text.removeprefix("gitdir:").strip()))
    common = _small_text(os.path.join(named, "commondir"))
    if common is not None and common.strip():
        named = os.path.realpath(os.path.join(named, common.strip()))
    return _git_folder(named)


def _git_folder(path: str) -> str | None:
    """path, when it holds what every git folder does (HEAD); else None."""
    return path if os.path.isfile(os.path.join(path, "HEAD")) else None


def _small_text(path: str) -> str | None:
    try:
        fd = os.open(path, _FILE)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = read_fd(fd, MAX_LINK, MAX_LINK + 1)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").strip() if len(data) <= MAX_LINK else None


def snapshot(root: str) -> Snapshot | None:
    """The control files of the git folder of the workspace at root; None when it is in no
    repository."""
    folder = find_folder(root)
    if folder is None:
        return None
    try:
        git = os.open(folder, _DIR)
    except OSError:
        return None
    try:
        st = os.fstat(git)
        return Snapshot(folder, (st.st_dev, st.st_ino), _read_all(git))
    finally:
        os.close(git)


def read_again(before: Snapshot) -> Files | None:
    """The same folder's control files now; None when it is gone, or was moved or replaced."""
    git = _reopen(before)
    if git is None:
        return None
    try:
        return _read_all(git)
    finally:
        os.close(git)


def _reopen(before: Snapshot) -> int | None:
    try:
        git = os.open(before.folder, _DIR)
    except OSError:
        return None
    st = os.fstat(git)
    if (st.st_dev, st.st_ino) != before.identity:
        os.close(git)
        return None
    return git


def _read_all(git: int) -> Files:
    found: Files = {}
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
    return found


def changes_since(before: Snapshot) -> list[tuple[str, str]]:
    """(path, added | modified | deleted) for each control file that differs now, or
    [(".git", "replaced")] when the git folder read before is gone or another is in its place."""
    now = read_again(before)
    return [(REPLACED, "replaced")] if now is None else changes(before.files, now)


def changes(before: Files, now: Files) -> list[tuple[str, str]]:
    """(path, added | modified | deleted) for each control file that differs."""
    found = [(p, "deleted") for p in before if p not in now]
    found += [(p, "added") for p in now if p not in before]
    found += [(p, "modified") for p, v in now.items()
              if p in before and (v.digest, v.mode) != (before[p].digest, before[p].mode)]
    return sorted(found)


def put_back(before: Snapshot, paths: list[str],
             keep: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Each path back to its version in `before` (removed when it had none), once the version
    the command left is copied under `keep`. Returns (undone, left with why)."""
    git = None if REPLACED in paths else _reopen(before)
    if git is None:
        return [], [(path, f"the git folder {before.folder} was moved or replaced: not put back")
                    for path in paths]
    undone: list[str] = []
    left: list[tuple[str, str]] = []
    try:
        for path in paths:
            folder, _, name = path.removeprefix(".git/").rpartition("/")
            old = before.files.get(path)
            if old is not None and old.data is None:
                left.append((path, f"over {MAX_BYTES} bytes before the command: not kept, so not "
                                   "put back"))
                continue
            try:
                _keep_current(git, folder, name, keep / path)
                _write_or_remove(git, folder, name, old)
            except OSError as exc:
                left.append((path, f"could not be put back: {exc.strerror or exc}"))
                continue
            undone.append(path)
    finally:
        os.close(git)
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


def _keep_current(git: int, folder: str, name: str, target: Path) -> None:
    current = _read(git, folder, name)
    if current is None or current.data is None:
        return  # nothing there, or too big to copy: it is named, and left where it is below
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        _write_all(fd, current.data)
    finally:
        os.close(fd)


def _write_or_remove(git: int, folder: str, name: str, old: Version | None) -> None:
    fd = _open_folder(git, folder)
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
