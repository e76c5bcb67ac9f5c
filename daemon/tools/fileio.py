"""File primitives the tools share: hashing, text reading with caps, atomic writes."""

from __future__ import annotations

import hashlib
import os
import tempfile

from intentd.daemon.tools.base import ToolFailed

READ_CAP_BYTES = 2 * 1024 * 1024


def sha256_file(path: str) -> str | None:
    """sha256 of the file's bytes, or None when it does not exist or is not a regular file."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_text(path: str) -> str:
    """The whole file as text; clear errors for missing, binary or over-cap files."""
    cap = READ_CAP_BYTES
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise ToolFailed(f"file not found: {path}") from None
    if os.path.isdir(path):
        raise ToolFailed(f"{path} is a directory: use list_files")
    if size > cap:
        raise ToolFailed(f"file is {size} bytes, over the {cap}-byte read cap: "
                         "read a line range with start_line and end_line")
    with open(path, "rb") as handle:
        data = handle.read(cap + 1)
    return decode(data, path)


def decode(data: bytes, path: str) -> str:
    if b"\x00" in data[:8192]:
        raise ToolFailed(f"{path} looks like a binary file; it is not shown")
    return data.decode("utf-8", errors="replace")


def atomic_write(path: str, text: str, mode: int | None = None) -> None:
    """Write via a temp file in the same folder, fsync, rename: a crash leaves old or new, never half.
    The file gets `mode`, or else keeps the mode it had (a new one: 0600, mkstemp's)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    if mode is None:
        mode = _existing_mode(path)
    fd, temp = tempfile.mkstemp(prefix=".intentd-", suffix=".tmp", dir=folder)
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
    _fsync_dir(folder)


def _existing_mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None


def _fsync_dir(folder: str) -> None:
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
