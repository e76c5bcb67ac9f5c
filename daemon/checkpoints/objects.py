"""Blob storage in a private bare git repository (dulwich): loose objects for a few files, packs for many."""

from __future__ import annotations

import errno
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from pathlib import Path

from dulwich.errors import ChecksumMismatch
from dulwich.object_store import DiskObjectStore
from dulwich.objects import Blob, ObjectID, ShaFile
from dulwich.repo import Repo

from .errors import CorruptStore, DiskFull

# From this many new blobs at once, one pack beats that many loose files (one inode and at
# least one 4 KiB block each); below it, a loose object is the cheapest write.
PACK_THRESHOLD = 64
# Packs are written in chunks so a first checkpoint of a big workspace never holds it all in memory.
PACK_CHUNK_BYTES = 32 * 2**20
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def make_blob(data: bytes) -> Blob:
    return Blob.from_string(data)


def blob_sha(blob: Blob) -> str:
    return blob.id.decode("ascii")


def _oid(sha: str) -> ObjectID:
    return ObjectID(sha.encode("ascii"))


def disk_usage(path: str) -> int:
    """Bytes a file really takes on disk (whole blocks), 0 if it is gone."""
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


class BlobStore:
    """Content-addressed file contents. Git-compatible: `git --git-dir=<store>/git cat-file -p SHA` works."""

    def __init__(self, git_dir: Path) -> None:
        self._git_dir = git_dir
        self._objects_dir = git_dir / "objects"
        if not (self._objects_dir / "pack").is_dir():
            Repo.init_bare(str(git_dir), mkdir=not git_dir.exists()).close()
        self._objects = DiskObjectStore(str(self._objects_dir))

    def close(self) -> None:
        self._objects.close()

    def has(self, sha: str) -> bool:
        return _oid(sha) in self._objects

    def put(self, blobs: Sequence[Blob]) -> int:
        """Store blobs not stored yet; returns the disk bytes added. ENOSPC becomes DiskFull."""
        new: dict[bytes, Blob] = {}
        for blob in blobs:
            if blob.id not in new and ObjectID(blob.id) not in self._objects:
                new[blob.id] = blob
        try:
            if len(new) >= PACK_THRESHOLD:
                return self._write_pack(list(new.values()))
            return sum(self._write_loose(blob) for blob in new.values())
        except OSError as exc:
            if exc.errno in _NO_SPACE:
                raise DiskFull(f"no space left on device while saving to {self._git_dir}; "
                               "nothing was recorded") from exc
            raise

    def _write_loose(self, blob: Blob) -> int:
        self._objects.add_object(blob)
        return disk_usage(self._loose_path(blob_sha(blob)))

    def _write_pack(self, blobs: list[Blob]) -> int:
        pack = self._objects.add_objects([(blob, None) for blob in blobs])
        if pack is None:
            return 0
        return sum(disk_usage(p) for p in self._pack_files(pack.name()))

    def get(self, sha: str) -> bytes:
        """A blob's content; CorruptStore if the object is missing or damaged."""
        try:
            obj = self._objects[_oid(sha)]
        except KeyError:
            raise CorruptStore(f"object {sha} is missing from the store {self._git_dir}") from None
        except (zlib.error, ChecksumMismatch, ValueError, OSError) as exc:
            raise CorruptStore(f"object {sha} in the store {self._git_dir} is damaged: {exc}") from exc
        if not isinstance(obj, Blob):
            raise CorruptStore(f"object {sha} in the store {self._git_dir} is not a file blob")
        return bytes(obj.as_raw_string())

    def remove_loose(self, shas: Iterable[str]) -> int:
        """Delete loose copies of dead blobs; returns how many were loose (packed ones wait for compact())."""
        removed = 0
        for sha in shas:
            with suppress(FileNotFoundError):
                os.unlink(self._loose_path(sha))
                removed += 1
        return removed

    def disk_bytes(self) -> int:
        """What the object store takes on disk, counted file by file."""
        total = 0
        for folder, _dirs, files in os.walk(self._objects_dir):
            total += sum(disk_usage(os.path.join(folder, name)) for name in files)
        return total

    def compact(self, live: set[str]) -> None:
        """Rewrite every pack and loose object into fresh packs holding only live blobs."""
        old_packs = [self._pack_files(pack.name()) for pack in self._objects.packs]
        loose = list(self._loose_files())
        chunk: list[Blob] = []
        size = 0
        for blob in self._live_blobs(live):
            chunk.append(blob)
            size += blob.raw_length()
            if size >= PACK_CHUNK_BYTES:
                self._write_pack(chunk)
                chunk, size = [], 0
        if chunk:
            self._write_pack(chunk)
        self._objects.close()
        fresh_store = DiskObjectStore(str(self._objects_dir))
        fresh = {p for pack in fresh_store.packs for p in self._pack_files(pack.name())}
        fresh_store.close()
        for path in [p for files in old_packs for p in files if p not in fresh] + loose:
            with suppress(FileNotFoundError):
                os.unlink(path)
        self._objects = DiskObjectStore(str(self._objects_dir))

    def _live_blobs(self, live: set[str]) -> Iterator[Blob]:
        for sha in sorted(live):
            with suppress(KeyError):
                obj: ShaFile = self._objects[_oid(sha)]
                if isinstance(obj, Blob):
                    yield obj

    def _loose_files(self) -> Iterator[str]:
        for name in os.listdir(self._objects_dir):
            folder = self._objects_dir / name
            if len(name) == 2 and folder.is_dir():
                yield from (str(folder / entry) for entry in os.listdir(folder))

    def _loose_path(self, sha: str) -> str:
        return str(self._objects_dir / sha[:2] / sha[2:])

    def _pack_files(self, name: bytes | str) -> tuple[str, str]:
        text = name.decode("ascii") if isinstance(name, bytes) else name
        base = self._objects_dir / "pack" / f"pack-{text}"
        return (f"{base}.pack", f"{base}.idx")
