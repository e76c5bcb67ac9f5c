"""Blob storage in a private bare git repository: dulwich writes single blobs as loose objects and
reads everything; git's own fast-import and pack-objects write batches and delta-compressed packs."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, cast

from dulwich.errors import ChecksumMismatch
from dulwich.object_store import DiskObjectStore
from dulwich.objects import Blob
from dulwich.repo import Repo

from intentd.daemon.utils.statedir import PRIVATE_DIR, make_tree_private

from .errors import CheckpointError, CorruptStore, DiskFull

if TYPE_CHECKING:  # a NewType in recent dulwich only; plain bytes at run time
    from dulwich.objects import ObjectID

# From this many new blobs at once, one pack beats that many loose files (one inode and at
# least one 4 KiB block each); below it, a loose object is the cheapest write.
PACK_THRESHOLD = 64
# Packs are written in chunks so a first checkpoint of a big workspace never holds it all in memory.
PACK_CHUNK_BYTES = 32 * 2**20
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
# Blobs are copies of workspace files: only their owner may read them, and nobody rewrites them.
PRIVATE_FILE = 0o400
# (blob sha, path it was saved for): the path lets git pick delta bases among versions of a file.
Named = Sequence[tuple[str, str]]


DELTA_MAX_BYTES = 1 << 20  # larger blobs are packed whole, never searched for a delta base


def _git_env() -> dict[str, str]:
    """The store's git sees none of the workspace's GIT_* variables and no system or global config
    (so no hooks and no surprising settings), whatever the daemon was started from."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    return env


def make_blob(data: bytes) -> Blob:
    return Blob.from_string(data)


def data_sha(data: bytes) -> str:
    """The id git gives data as a blob (make_blob(data)'s), without building a Blob object."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def blob_sha(blob: Blob) -> str:
    return blob.id.decode("ascii")


def _oid(sha: str) -> ObjectID:
    return cast("ObjectID", sha.encode("ascii"))


def _text(name: bytes | str) -> str:
    return name.decode("ascii") if isinstance(name, bytes) else name


def disk_usage(path: str) -> int:
    """Bytes a file really takes on disk (whole blocks), 0 if it is gone."""
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


def _unless_missing(error: OSError) -> None:
    """os.walk's onerror: a folder it cannot read is not an empty one."""
    if not isinstance(error, FileNotFoundError):
        raise error


def _make_repository(git_dir: Path) -> None:
    """A new bare repository, made beside its place and renamed into it: an init cut short (the
    daemon stopped while a store opened) left a folder that every later init failed on
    (`branches` exists), and with it every checkpoint of the workspace. Such a folder holds no
    object (they come after the init): it is replaced; one that holds files is not touched."""
    if git_dir.is_symlink() or (git_dir.exists() and not git_dir.is_dir()):
        raise CorruptStore(f"{git_dir} is not a folder; move it aside to start a new store")
    if git_dir.is_dir():
        if any(files for _, _, files in os.walk(git_dir / "objects", onerror=_unless_missing)):
            raise CorruptStore(f"{git_dir} is not a whole git repository but holds objects; "
                               "move it aside to start a new store")
        shutil.rmtree(git_dir)
    making = git_dir.with_name(git_dir.name + ".new")
    shutil.rmtree(making, ignore_errors=True)  # left by an init cut short
    Repo.init_bare(str(making), mkdir=True).close()
    make_tree_private(making)
    os.rename(making, git_dir)


class BlobStore:
    """Content-addressed file contents. Git-compatible: `git --git-dir=<store>/git cat-file -p SHA`
    works for every blob but those still in the inbox (inbox.py), which `get` reads through
    `inbox(sha)`: the blob's content, checked, or None."""

    def __init__(self, git_dir: Path,
                 inbox: Callable[[str], bytes | None] | None = None) -> None:
        self._git_dir = git_dir
        self._inbox = inbox
        self._objects_dir = git_dir / "objects"
        self._pack_dir = self._objects_dir / "pack"
        if not self._pack_dir.is_dir():
            try:
                _make_repository(git_dir)
            except OSError as exc:
                raise CheckpointError(f"cannot make the checkpoint store's repository {git_dir}:"
                                      f" {exc.strerror or exc}") from exc
        self._objects = DiskObjectStore(str(self._objects_dir))
        self.loose_count = sum(1 for _ in self._loose_files())
        self._made: set[str] = set()  # loose-object folders known to exist (never removed)

    def close(self) -> None:
        self._objects.close()

    def put(self, blobs: Sequence[Blob]) -> int:
        """Store blobs not stored yet; returns the disk bytes added. ENOSPC becomes DiskFull."""
        unique = {blob.id: blob for blob in blobs}
        with self._saving("; nothing was recorded"):
            if len(unique) >= PACK_THRESHOLD:
                # fast-import itself skips objects already packed; loose ones are rare duplicates
                return self._import_pack(list(unique.values()))
            # A blob that is only packed gets a loose copy too: cheaper than searching every
            # pack's index on each checkpoint, and the next repack folds the copy away.
            return sum(self._write_loose(blob) for blob in unique.values())

    @contextmanager
    def _saving(self, outcome: str = "") -> Iterator[None]:
        """ENOSPC and EDQUOT while saving become DiskFull, which says where."""
        try:
            yield
        except OSError as exc:
            if exc.errno in _NO_SPACE:
                raise DiskFull(f"no space left on device while saving to {self._git_dir}"
                               f"{outcome}") from exc
            raise

    def _write_loose(self, blob: Blob) -> int:
        """One loose object in git's format, written to a temp file and renamed into place;
        0 when it is there already."""
        path = self._loose_path(blob_sha(blob))
        if os.path.exists(path):
            return 0
        folder = os.path.dirname(path)
        if folder not in self._made:
            with suppress(FileExistsError):
                os.mkdir(folder, PRIVATE_DIR)
            self._made.add(folder)
        data = blob.as_raw_string()
        packed = zlib.compress(b"blob %d\0" % len(data) + data, 1)
        temp = f"{path}.{os.getpid()}.{id(blob)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            fd = os.open(temp, flags, PRIVATE_FILE)
        except FileNotFoundError:  # the folder went away behind our back: make it again
            os.makedirs(folder, PRIVATE_DIR, exist_ok=True)
            fd = os.open(temp, flags, PRIVATE_FILE)
        try:
            view = memoryview(packed)
            while view:  # os.write may write less than asked (a file object's cost spared)
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            with suppress(OSError):
                os.unlink(temp)
            raise
        os.close(fd)
        os.replace(temp, path)
        self.loose_count += 1
        return disk_usage(path)

    def import_blobs(self, blobs: list[Blob]) -> int:
        """Blobs moved from the inbox, as one pack whose each blob is a delta of the one before
        it where that is smaller (fast-import's only delta search): given in path order, a
        file's versions follow each other. Returns the disk bytes added."""
        with self._saving():
            return self._import_pack(blobs, depth=50)

    def _import_pack(self, blobs: list[Blob], depth: int = 0) -> int:
        """One pack through `git fast-import` (C; with depth 0, no delta search): twice
        dulwich's packing speed."""
        stream = bytearray()
        for blob in blobs:
            data = blob.as_raw_string()
            stream += b"blob\ndata %d\n" % len(data)
            stream += data
            stream += b"\n"
        # unpackLimit=0: below 100 objects fast-import would otherwise explode the pack into loose files
        command = ["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", f"--depth={depth}"]
        return self._git_pack(command, bytes(stream))[0]

    def _git_pack(self, args: list[str], stdin: bytes) -> tuple[int, str]:
        """Run a git command that writes one pack; returns (bytes added on disk, its stdout)."""
        before = set(os.listdir(self._pack_dir))
        try:
            done = subprocess.run(["git", f"--git-dir={self._git_dir}", *args], input=stdin,
                                  capture_output=True, env=_git_env(), check=False)
        finally:
            self._reopen()
        added = set(os.listdir(self._pack_dir)) - before
        if done.returncode != 0:
            self._remove_partial(added)
            text = done.stderr.decode("utf-8", "replace").strip()
            code = errno.ENOSPC if "No space left" in text else errno.EIO
            raise OSError(code, text.splitlines()[-1] if text else f"git {args[0]} failed")
        for name in added:  # git leaves packs 0444
            os.chmod(self._pack_dir / name, PRIVATE_FILE)
        size = sum(disk_usage(str(self._pack_dir / name)) for name in added)
        return size, done.stdout.decode("ascii", "replace").strip()

    def _remove_partial(self, names: set[str]) -> None:
        for name in names:
            with suppress(OSError):
                os.unlink(self._pack_dir / name)
        for crash in self._git_dir.glob("fast_import_crash_*"):
            with suppress(OSError):
                os.unlink(crash)

    def _reopen(self) -> None:
        """Drop dulwich's cached pack list so it sees packs written by git."""
        self._objects.close()
        self._objects = DiskObjectStore(str(self._objects_dir))

    def get(self, sha: str) -> bytes:
        """A blob's content; CorruptStore if the object is missing or damaged."""
        try:
            obj = self._objects[_oid(sha)]
        except KeyError:
            found = self._inbox(sha) if self._inbox is not None else None
            if found is None:
                raise CorruptStore(f"object {sha} is missing from the store {self._git_dir}") from None
            return found
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
        self.loose_count -= removed
        return removed

    def loose_shas(self) -> list[str]:
        return [path[-41:-39] + path[-38:] for path in self._loose_files()]

    def packs(self) -> list[tuple[str, int]]:
        """(name, bytes on disk) of every pack."""
        sizes: dict[str, int] = {}
        for name in os.listdir(self._pack_dir):
            stem, _dot, _ext = name.partition(".")
            if stem.startswith("pack-"):
                sizes[stem] = sizes.get(stem, 0) + disk_usage(str(self._pack_dir / name))
        return sorted(sizes.items())

    def pack_shas(self, name: str) -> list[str]:
        """The blobs one pack holds."""
        for pack in self._objects.packs:
            if f"pack-{_text(pack.name())}" == name:
                return [_text(sha) for sha in pack.index]
        return []

    def repack(self, named: Named, *, drop_loose: Iterable[str] = (), drop_packs: Iterable[str] = ()) -> None:
        """Write the named blobs into one delta-compressed pack (git pack-objects, which picks delta
        bases among versions of the same path), then delete the given loose objects and packs."""
        keep = f"pack-{self._pack_objects(named)}" if named else ""
        for name in set(drop_packs) - {keep}:
            for path in self._pack_dir.glob(f"{name}.*"):
                with suppress(FileNotFoundError):
                    os.unlink(path)
        self.remove_loose(drop_loose)
        self._reopen()

    def _pack_objects(self, named: Named) -> str:
        """git pack-objects over these blobs; returns the new pack's name."""
        lines = "".join(f"{sha} {path.replace(chr(10), ' ')}\n" for sha, path in named)
        window = ["--window=10", "--depth=50", "-q", str(self._pack_dir / "pack")]
        # No delta search for blobs over 1 MiB: random data in files near the 5 MiB cap made
        # the search take minutes (65 s for 200 MB here, 1.9 s without), and the next
        # checkpoint waits for upkeep. Versions of a source file are far smaller.
        big = ["-c", f"core.bigFileThreshold={DELTA_MAX_BYTES}"]
        return self._git_pack([*big, "pack-objects", *window],
                              lines.encode("utf-8", "surrogateescape"))[1]

    def disk_bytes(self) -> int:
        """What the object store takes on disk, counted file by file."""
        total = 0
        for folder, _dirs, files in os.walk(self._objects_dir):
            total += sum(disk_usage(os.path.join(folder, name)) for name in files)
        return total

    def _loose_files(self) -> Iterator[str]:
        for name in os.listdir(self._objects_dir):
            folder = self._objects_dir / name
            if len(name) == 2 and folder.is_dir():
                yield from (str(folder / entry) for entry in os.listdir(folder))

    def _loose_path(self, sha: str) -> str:
        return str(self._objects_dir / sha[:2] / sha[2:])
