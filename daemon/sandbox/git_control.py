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
import secrets
import stat
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from intentd.daemon.utils.reading import read_fd
from intentd.daemon.utils.staging import stage

FILES = ("config", "info/exclude", "info/attributes")
HOOKS = "hooks"
MAX_BYTES = 1 << 20   # a control file larger than this is compared by digest and not put back
MAX_HOOKS = 200       # other files in hooks/ read; past that, they are compared by their stat
# The hooks git runs (githooks(5)), and the fsmonitor hook
GIT_HOOKS = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
    "p4-post-changelist", "p4-pre-submit", "post-index-change",
)
MAX_LINK = 4096       # a `.git` link file or a `commondir` longer than this is not one
REPLACED = ".git/"    # the one change named when the git folder itself was moved or replaced
LINK = ".git"         # the workspace's `.git` file that names its git folder (a worktree's)
_DIR_DIGEST = "folder"  # a folder is compared by its mode alone
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Version:
    """One control file as read: its digest, its mode, its bytes (None when they cannot be kept:
    over the cap, unreadable, or not a file), and whether it is a symlink (bytes: its target)."""

    digest: str
    mode: int
    data: bytes | None
    link: bool = False


Files = dict[str, Version]  # ".git/<path>" -> the file; a file that is absent is not in it


@dataclass(frozen=True)
class Snapshot:
    """The control files of one git folder, as read before a command, and the workspace's
    `.git` file that named the folder (its path and bytes), when one did."""

    folder: str                    # the git folder's real path
    identity: tuple[int, int]      # its (device, inode): later reads must find the same folder
    files: Files = field(default_factory=dict)
    link_file: tuple[str, bytes] | None = None


@dataclass(frozen=True)
class Before:
    """Git's state read right after a command's checkpoint, for its audit: the control files of
    the workspace's repository (None: in none) and of the repositories inside it (by the path of
    their `.git`), and the checkpoint store's git_mark(), from when a `.git` found in the
    workspace counts as one the command made (None: unknown)."""

    own: Snapshot | None
    nested: dict[str, Snapshot] = field(default_factory=dict)
    mark: int | None = None


def _find(root: str) -> tuple[str, str | None] | None:
    """The real path of the git folder whose hooks and config apply to the workspace at root,
    and the `.git` file that named it (None when `.git` is the folder); None when the
    workspace is in no repository."""
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
            return _named_by(dot_git, st)
        above = os.path.dirname(here)
        try:
            if above == here or os.stat(above).st_dev != device:
                return None  # git stops at the top, and at another file system
        except OSError:
            return None
        here = above


def _named_by(dot_git: str, st: os.stat_result) -> tuple[str, str | None] | None:
    """The git folder a `.git` entry (its stat given) names, and the `.git` file when it is
    one; None when it names none."""
    if stat.S_ISDIR(st.st_mode):
        folder = _git_folder(os.path.realpath(dot_git))
        return (folder, None) if folder is not None else None
    if stat.S_ISREG(st.st_mode):
        folder = _linked_folder(os.path.dirname(dot_git), dot_git)
        return (folder, dot_git) if folder is not None else None
    return None


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
    data = _small_bytes(path)
    return data.decode("utf-8", "replace").strip() if data is not None else None


def _small_bytes(path: str) -> bytes | None:
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
    return data if len(data) <= MAX_LINK else None


def snapshot(root: str) -> Snapshot | None:
    """The control files of the git folder of the workspace at root; None when it is in no
    repository."""
    found = _find(root)
    return _snapshot_of(*found) if found is not None else None


def snapshot_entry(dot_git: str) -> Snapshot | None:
    """The control files of the git folder that the `.git` entry at this path (a folder, or a
    file naming one) gives its folder; None when it gives none (a symlink is not followed)."""
    try:
        found = _named_by(dot_git, os.lstat(dot_git))
    except OSError:
        return None
    return _snapshot_of(*found) if found is not None else None


def _snapshot_of(folder: str, link: str | None) -> Snapshot | None:
    link_bytes = _small_bytes(link) if link is not None else None
    try:
        git = os.open(folder, _DIR)
    except OSError:
        return None
    try:
        st = os.fstat(git)
        return Snapshot(folder, (st.st_dev, st.st_ino), _read_all(git),
                        (link, link_bytes) if link is not None and link_bytes is not None else None)
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
    hooks = _read(git, "", HOOKS)  # the folder itself: a symlink, or a mode that hides it
    if hooks is not None:
        found[f".git/{HOOKS}"] = hooks
    # The hooks git runs are opened by name (a folder that cannot be listed still runs them),
    # then the rest, read up to MAX_HOOKS and compared by their stat past it. A hook runs by its
    # exact name only: `pre-commit.sample` never runs.
    try:
        fd = _open_folder(git, HOOKS)
    except OSError:
        return found  # no hooks folder (or not one: named above)
    try:
        try:
            listed = os.listdir(fd)
        except OSError:
            listed = []
        others = sorted(n for n in listed if n not in GIT_HOOKS and not n.endswith(".sample"))
        for index, name in enumerate((*GIT_HOOKS, *others)):
            version = _read_in(fd, name, keep=index < len(GIT_HOOKS) + MAX_HOOKS)
            if version is not None:
                found[f".git/{HOOKS}/{name}"] = version
    finally:
        os.close(fd)
    return found


def changes_since(before: Snapshot) -> list[tuple[str, str]]:
    """(path, added | modified | deleted) for each control file that differs now, or
    [(".git/", "replaced")] when the git folder read before is gone or another is in its place;
    (".git", "modified") when the workspace's `.git` file names another folder now."""
    linked = (before.link_file is not None
              and _small_bytes(before.link_file[0]) != before.link_file[1])
    now = read_again(before)
    found = [(REPLACED, "replaced")] if now is None else changes(before.files, now)
    return [(LINK, "modified")] + found if linked else found


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
    the command left is kept under `keep`. Returns (undone, left with why). What the command
    left that is too big or not readable to copy is moved aside in its own folder, under a name
    git never reads, and the place noted under `keep`: nothing is destroyed."""
    if LINK in paths:
        undone, left = _put_back_link(before, keep)
        paths = [p for p in paths if p != LINK]
    else:
        undone, left = [], []
    git = None if REPLACED in paths or not paths else _reopen(before)
    if git is None:
        return undone, left + [
            (path, f"the git folder {before.folder} was moved or replaced: not put back")
            for path in paths]
    # parents before what is in them when restoring; what is in them first when removing
    restores = sorted(p for p in paths if p in before.files)
    removals = sorted((p for p in paths if p not in before.files), reverse=True)
    try:
        for path in restores + removals:
            folder, _, name = path.removeprefix(".git/").rpartition("/")
            old = before.files.get(path)
            if old is not None and old.data is None and old.digest != _DIR_DIGEST:
                left.append((path, f"over {MAX_BYTES} bytes or unreadable before the command: "
                                   "not kept, so not put back"))
                continue
            try:
                _put_aside(git, folder, name, keep / path)
                _write_or_remove(git, folder, name, old)
            except OSError as exc:
                left.append((path, f"could not be put back: {exc.strerror or exc}"))
                continue
            undone.append(path)
    finally:
        os.close(git)
    return undone, left


def _put_back_link(before: Snapshot, keep: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """The workspace's `.git` file, as it was (a command pointed it at another git folder)."""
    assert before.link_file is not None
    path, data = before.link_file
    now = _small_bytes(path)
    try:
        if now is not None:
            _keep_bytes(keep / ".git.link", now)
        folder = os.open(os.path.dirname(path), _DIR)
        try:
            _replace(folder, os.path.basename(path), data, 0o644)
        finally:
            os.close(folder)
    except OSError as exc:
        return [], [(LINK, f"could not be put back: {exc.strerror or exc}")]
    return [LINK], []


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


def _read(git: int, folder: str, name: str, keep: bool = True) -> Version | None:
    """What .git/<folder>/<name> is, or None when it is absent (see _read_in)."""
    try:
        fd = _open_folder(git, folder)
    except OSError:
        return None
    try:
        return _read_in(fd, name, keep)
    finally:
        os.close(fd)


def _read_in(fd: int, name: str, keep: bool = True) -> Version | None:
    """What name is in the folder open as fd, or None when it is absent. Never followed: a
    symlink is its target's text. A file is read (with `keep`); a file it may not read, a FIFO
    or a socket is known by its stat alone, and a folder by its mode (bytes None: compared,
    never copied)."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        return Version(_DIR_DIGEST, mode, None)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)) or not keep:
        return _by_stat(st)
    # Swapped or removed between the stat and the read (a process the command left running),
    # or not readable: known by the stat, so the audit still compares it and never fails
    try:
        if stat.S_ISLNK(st.st_mode):
            target = os.fsencode(os.readlink(name, dir_fd=fd))
            return Version(_digest(b"link:" + target), mode, target, link=True)
        file = os.open(name, _FILE, dir_fd=fd)
        try:
            data = read_fd(file, st.st_size, MAX_BYTES + 1)
        finally:
            os.close(file)
    except OSError:
        return _by_stat(st)
    return Version(_digest(data), mode, data if len(data) <= MAX_BYTES else None)


def _by_stat(st: os.stat_result) -> Version:
    """A file known by its stat only: its type, size, inode and times."""
    return Version(_digest(f"{stat.S_IFMT(st.st_mode)} {st.st_size} {st.st_ino} "
                           f"{st.st_mtime_ns} {st.st_ctime_ns}".encode()),
                   stat.S_IMODE(st.st_mode), None)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _put_aside(git: int, folder: str, name: str, target: Path) -> None:
    """What the command left at .git/<folder>/<name>, copied under `target` (a symlink's target
    text); moved aside in its folder when it cannot be copied. Nothing there: nothing to do."""
    current = _read(git, folder, name)
    if current is None or current.digest == _DIR_DIGEST:
        return  # a folder is put back as a folder, or removed only when empty
    if current.data is not None:
        _keep_bytes(target.with_name(target.name + ".symlink") if current.link else target,
                    current.data)
        return
    fd = _open_folder(git, folder)
    try:
        aside = f".{name}.intentd-kept-{secrets.token_hex(6)}"
        os.rename(name, aside, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)
    where = "/".join(filter(None, (".git", folder, aside)))
    _keep_bytes(target.with_name(target.name + ".moved"),
                f"too big or unreadable to copy: moved aside to {where}\n".encode())


def _keep_bytes(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_or_remove(git: int, folder: str, name: str, old: Version | None) -> None:
    fd = _open_folder(git, folder)
    try:
        if old is None:
            _remove(fd, name)
        elif old.digest == _DIR_DIGEST:
            _as_folder(fd, name, old.mode)
        else:
            assert old.data is not None
            _replace(fd, name, old.data, old.mode, old.link)
    finally:
        os.close(fd)


def _remove(fd: int, name: str) -> None:
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        os.rmdir(name, dir_fd=fd)  # only when empty: what is in it was named on its own
    else:
        os.unlink(name, dir_fd=fd)


def _as_folder(fd: int, name: str, mode: int) -> None:
    """name a folder again, with its mode: whatever the command put in its place is gone (kept)."""
    try:
        inner = os.open(name, _DIR, dir_fd=fd)
    except FileNotFoundError:
        os.mkdir(name, mode, dir_fd=fd)
        return
    except OSError:  # a symlink or a file in its place
        os.unlink(name, dir_fd=fd)
        os.mkdir(name, mode, dir_fd=fd)
        return
    try:
        os.fchmod(inner, mode)
    finally:
        os.close(inner)


def _replace(fd: int, name: str, data: bytes, mode: int, link: bool = False) -> None:
    """name's bytes and mode (a symlink's target, with `link`), staged under a fresh name then
    renamed over it: a name the command prepared is never opened."""
    temp = stage(fd, name, data, mode, link)
    try:
        os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp, dir_fd=fd)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
