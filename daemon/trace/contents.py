"""Contents of the files agents wrote, kept by sha256: what blame and the trace export diff."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import threading
import zlib
from collections import OrderedDict
from pathlib import Path

from intentd.daemon.tools.fileio import sha256_file
from intentd.daemon.utils.statedir import ensure_private

MAX_KEPT_BYTES = 2 * 1024 * 1024  # larger files are hashed, not kept: no line-level trace for them
BINARY_PROBE = 8192
RECENT_BYTES = 16 * 1024 * 1024  # texts kept in memory: a call's "after" is the next's "before"


class ContentStore:
    """Compressed file contents under their sha256 in one private folder; a stored object whose
    contents no longer match its name reads as missing."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._recent: OrderedDict[str, bytes] = OrderedDict()
        self._recent_bytes = 0
        self._lock = threading.Lock()

    def keep(self, path: str) -> str | None:
        """The sha256 of the file at `path` (None when it does not exist), its text kept."""
        try:
            # O_NONBLOCK: a FIFO put where a file was expected must not hang the call
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (IsADirectoryError, PermissionError):
            return sha256_file(path)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None  # as sha256_file: special files have no contents to keep
            if info.st_size > MAX_KEPT_BYTES:
                return sha256_file(path)
            data = handle.read(MAX_KEPT_BYTES + 1)
        digest = hashlib.sha256(data).hexdigest()
        if len(data) <= MAX_KEPT_BYTES and b"\0" not in data[:BINARY_PROBE]:
            self.put(digest, data)
        return digest

    def put(self, digest: str, data: bytes) -> None:
        self._remember(digest, data)
        target = self._object(digest)
        if target.exists():
            return
        ensure_private(target.parent.parent)
        target.parent.mkdir(mode=0o700, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(zlib.compress(data, 1))
            os.replace(temporary, target)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)  # a full disk costs the trace of this file, never the call

    def get(self, digest: str | None) -> bytes | None:
        """The contents stored under `digest`; b"" for None (a file that did not exist)."""
        if digest is None:
            return b""
        with self._lock:
            found = self._recent.get(digest)
        if found is not None:
            return found
        try:
            data = zlib.decompress(self._object(digest).read_bytes())
        except (OSError, zlib.error, ValueError):
            return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    def _remember(self, digest: str, data: bytes) -> None:
        """The texts just kept, in memory: the diff right after a write needs them again."""
        with self._lock:
            if digest in self._recent:
                self._recent.move_to_end(digest)
                return
            self._recent[digest] = data
            self._recent_bytes += len(data)
            while self._recent_bytes > RECENT_BYTES and len(self._recent) > 1:
                _, dropped = self._recent.popitem(last=False)
                self._recent_bytes -= len(dropped)

    def _object(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256: {digest!r}")
        return self.folder / digest[:2] / digest[2:]
