"""File primitives the tools share: hashing, text reading with caps, atomic writes."""

from __future__ import annotations

import hashlib
import os
import stat
from typing import BinaryIO

from intentd.daemon.tools.anchor import Anchor
from intentd.daemon.tools.base import ToolFailed
from intentd.daemon.utils.inflight import temporary_name

READ_CAP_BYTES = 2 * 1024 * 1024
HASH_CHUNK = 1 << 20


def sha256_file(path: str) -> str | None:
    """sha256 of the file's bytes, or None when it does not exist or is not a regular file
    (a FIFO is never opened: reading one waits forever)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    digest = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        while chunk := os.read(fd, HASH_CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def held(path: str, anchor: Anchor | None) -> Anchor:
    """The anchor held since the check, else one taken now (which the caller closes)."""
    return anchor if anchor is not None else Anchor(path)


def open_checked(path: str, anchor: Anchor | None = None) -> BinaryIO:
    """The regular file at the checked, resolved `path`, reached without following a symlink
    that appeared since the check (through `anchor`, held since then, when given); clear
    errors for a missing file, a folder or a FIFO."""
    current = held(path, anchor)
    try:
        fd = current.open_regular()
    except FileNotFoundError:
        raise ToolFailed(f"file not found: {path}") from None
    except IsADirectoryError:
        raise ToolFailed(f"{path} is a directory: use list_files") from None
    finally:
        if current is not anchor:
            current.close()
    return os.fdopen(fd, "rb")


def read_text(path: str, anchor: Anchor | None = None) -> str:
    """The whole file as text; clear errors for missing, binary, special or over-cap files."""
    return decode(read_bytes(path, anchor), path)


def read_bytes(path: str, anchor: Anchor | None = None) -> bytes:
    """The whole file's bytes; clear errors for missing, special or over-cap files."""
    cap = READ_CAP_BYTES
    with open_checked(path, anchor) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > cap:
            raise ToolFailed(f"file is {size} bytes, over the {cap}-byte read cap: "
                             "read a line range with start_line and end_line")
        return handle.read(cap + 1)


def write_text(path: str, text: str, anchor: Anchor | None = None) -> None:
    """Atomically write a tool's file at its checked, resolved path (see Anchor.write)."""
    current = held(path, anchor)
    try:
        current.write(text.encode("utf-8"))
    finally:
        if current is not anchor:
            current.close()


def decode(data: bytes, path: str) -> str:
    if b"\x00" in data[:8192]:
        raise ToolFailed(f"{path} looks like a binary file; it is not shown")
    return data.decode("utf-8", errors="replace")


def atomic_write(path: str, text: str, mode: int | None = None) -> None:
    """Write via a temp file in the same folder, fsync, rename: a crash leaves old or new, never half.
    The file gets `mode`, or else keeps the mode it had (a new one: 0600). For the
    daemon's own files; a tool's file goes through write_text."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    if mode is None:
        mode = _existing_mode(path)
    with temporary_name(os.path.abspath(folder)) as name:  # checkpoints taken meanwhile leave it out
        temp = os.path.join(folder, name)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(text.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(temp, mode)
            os.replace(temp, path)
        except BaseException:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
            raise
    fsync_dir(folder)


def _existing_mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Make a rename in `folder` durable; best effort (some file systems refuse it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
