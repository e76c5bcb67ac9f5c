"""Where intentd keeps its state: outside every workspace, under the XDG state folder, private."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

PRIVATE_DIR = 0o700


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "intentd"


def workspace_state_dir(root: Path, home: Path | None = None) -> Path:
    """One folder per workspace, named so a person can tell which is which."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in root.name)[:40] or "root"
    return (home or state_home()) / "workspaces" / f"{name}-{digest}"


def checkpoints_dir(root: Path, home: Path | None = None) -> Path:
    """Where a workspace's checkpoint store lives: the engine's, the CLI's and the doctor's."""
    return workspace_state_dir(root, home) / "checkpoints"


def ensure_private(path: Path, home: Path | None = None) -> Path:
    """Make folder `path` (and any missing parent) with mode 0700, and tighten to 0700 the
    existing folders this user owns from the state home (or `home`) down to `path`.

    The state holds copies of files and commands, so umask's usual 0755 is not good enough.
    Outside the home only `path` itself is tightened: a parent such as /tmp is not ours.
    """
    path = Path(os.path.abspath(path))
    top = Path(os.path.abspath(home or state_home()))
    first = top if path == top or top in path.parents else path
    levels = [path, *path.parents]
    missing: list[Path] = []
    for level in levels:
        if level.is_dir():
            break
        missing.append(level)
    for level in reversed(missing):
        try:
            os.mkdir(level, PRIVATE_DIR)
        except FileExistsError:  # made meanwhile by another process, or a file is in the way
            if not level.is_dir():
                raise
    for level in levels[:levels.index(first) + 1]:
        _tighten(level)
    return path


def _tighten(folder: Path) -> None:
    st = os.stat(folder)
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077 and st.st_uid == os.getuid():
        os.chmod(folder, mode & ~0o077)


def make_tree_private(folder: Path) -> None:
    """Take group and other permissions off folder and all in it that this user owns (for state
    written before it was kept private). Symlinks are neither followed nor changed."""
    for parent, _dirs, files in os.walk(folder):
        for path in [parent, *(os.path.join(parent, name) for name in files)]:
            st = os.lstat(path)
            mode = stat.S_IMODE(st.st_mode)
            if not stat.S_ISLNK(st.st_mode) and mode & 0o077 and st.st_uid == os.getuid():
                os.chmod(path, mode & ~0o077)


def keep_sqlite_private(database: Path) -> None:
    """SQLite makes a database with the umask's 0644, and its -wal and -shm files copy the
    database's mode: make the database 0600 before SQLite opens it (and tighten those files
    when an older version made them open). Anything but a regular file under those names (a
    FIFO, on whose open this waited for ever; a symlink) raises OSError."""
    for suffix in ("", "-wal", "-shm"):
        path = f"{database}{suffix}"
        flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(path, flags | (0 if suffix else os.O_CREAT), 0o600)
        except FileNotFoundError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", path)
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
