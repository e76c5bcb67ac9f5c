"""Turns candidate paths into a draft checkpoint: reads what changed, hashes it, stores the blobs."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field

from intentd.daemon.utils.inflight import is_ours, under_way
from intentd.daemon.utils.reading import read_fd

from . import inbox
from .errors import WorkspaceMissing
from .objects import PACK_CHUNK_BYTES, BlobStore, data_sha, make_blob
from .state import ABSENT, DiskStat, Entry, lstat, to_disk_stat

# A file modified this recently may change again within the same timestamp tick, so its stat
# cache is not trusted (git calls this "racily clean").
RACY_NS = 2_000_000_000
ESCAPED = "not inside the workspace when read (a parent folder was swapped for a symlink)"
Known = Mapping[str, tuple[int, Entry]]


def size_text(limit: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if limit >= scale:
            return f"{limit / scale:g} {unit}"
    return f"{limit} bytes"


@dataclass(frozen=True)
class Observed:
    """A path as it is now: its entry, the bytes read (None if not read) and its ctime (-1 if absent)."""

    entry: Entry
    data: bytes | None
    ctime_ns: int


@dataclass
class Changes:
    """What recording a set of paths found, before it is written to the manifest."""

    entries: dict[str, Entry] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)  # paths known absent since the run began
    first_seen: list[tuple[str, int]] = field(default_factory=list)  # (path, ctime) never seen before
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stat_refresh: list[tuple[str, int, int, int, int]] = field(default_factory=list)
    data: dict[str, bytes] = field(default_factory=dict)  # content read, kept only for dry runs
    bytes_added: int = 0
    inbox: list[inbox.Row] = field(default_factory=list)  # new blobs for the manifest's inbox


class _Pending:
    """Blobs waiting to be stored, written in chunks so a huge first checkpoint stays in bounded memory."""

    def __init__(self, blobs: BlobStore) -> None:
        self._blobs = blobs
        self._waiting: dict[str, bytes] = {}  # content by blob id, each once
        self._bytes = 0
        self.added = 0

    def add(self, sha: str, data: bytes) -> None:
        self._waiting[sha] = data
        self._bytes += len(data)
        if self._bytes >= PACK_CHUNK_BYTES:
            self.flush()

    def flush(self) -> int:
        """Store what waits; returns the disk bytes added so far."""
        if self._waiting:
            self.added += self._blobs.put([make_blob(data) for data in self._waiting.values()])
            self._waiting, self._bytes = {}, 0
        return self.added

    def finish(self, changes: Changes) -> None:
        """The last of them: a few small blobs go to the inbox, written with the checkpoint's
        manifest rows; the rest to git now."""
        if self._waiting and inbox.fits(list(self._waiting.values())):
            changes.inbox = [inbox.row(sha, data) for sha, data in self._waiting.items()]
            self.added += sum(len(data) for _sha, data in changes.inbox)
            self._waiting, self._bytes = {}, 0
        changes.bytes_added = self.flush()


class Recorder:
    """Reads workspace files safely (no symlink following) and stores their content as blobs."""

    def __init__(self, root: str, blobs: BlobStore, max_file_bytes: int) -> None:
        self._root = root
        self._real_root = os.path.realpath(root)
        self._blobs = blobs
        self._max = max_file_bytes
        # entries read ahead by a warm-up, used like the stat cache (set only under the store's lock)
        self.hints: Known = {}
        # when the hints were read (less a timestamp tick): a hinted file whose inode changed
        # since is read again, though its size and mtime were set back
        self.hints_since_ns = 0

    def escapes(self, rel: str) -> bool:
        """True when a parent folder of rel is a symlink, so rel is not really inside the workspace.
        Each folder below the root is looked at once (realpath would look at the root's own
        path again for every file, and in Python); one that is missing ends the search, as a
        file under it is absent anyway."""
        parent = os.path.dirname(rel)
        if not parent:
            return False
        path = self._root
        for name in parent.split("/"):
            path = f"{path}/{name}"
            try:
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    return True
            except OSError:
                return False
        return False

    def stat(self, rel: str) -> DiskStat | None:
        """lstat of rel, None if absent or if a parent folder is a symlink."""
        return None if self.escapes(rel) else lstat(os.path.join(self._root, rel))

    def observe(self, rel: str, st: DiskStat | None, known: Entry | None, trust_stat: bool) -> Observed:
        """The path's current entry; reads it unless the stat cache shows it unchanged."""
        if st is None or st.kind == "dir":
            return Observed(ABSENT, None, -1)
        if st.kind == "other":
            return Observed(Entry("skipped", perm=st.perm, size=st.size, mtime_ns=st.mtime_ns,
                                  note="not a regular file", ino=st.ino), None, st.ctime_ns)
        if trust_stat and known is not None and st.matches(known):
            return Observed(known, None, st.ctime_ns)
        if st.kind == "link":
            return self._observe_link(rel, st)
        return self._observe_file(rel, st)

    def _observe_link(self, rel: str, st: DiskStat) -> Observed:
        try:
            data = os.fsencode(os.readlink(os.path.join(self._root, rel)))
        except (FileNotFoundError, NotADirectoryError, OSError):
            return Observed(ABSENT, None, -1)
        entry = Entry("link", data_sha(data), 0, st.size, _cache_mtime(st.mtime_ns), ino=st.ino)
        return Observed(entry, data, st.ctime_ns)

    def _observe_file(self, rel: str, st: DiskStat) -> Observed:
        if st.size > self._max:
            return Observed(self._too_big(st), None, st.ctime_ns)
        try:
            fd = os.open(os.path.join(self._root, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            return Observed(ABSENT, None, -1)
        except OSError as exc:
            return Observed(Entry("skipped", perm=st.perm, size=st.size, mtime_ns=st.mtime_ns,
                                  note=f"unreadable: {exc.strerror}", ino=st.ino), None,
                            st.ctime_ns)
        try:
            now = to_disk_stat(os.fstat(fd))
            if now.kind != "file":
                return Observed(ABSENT, None, -1)
            if not self._opened_inside(fd, rel):
                return Observed(Entry("skipped", perm=now.perm, size=now.size, mtime_ns=-1,
                                      note=ESCAPED), None, now.ctime_ns)
            if now.size > self._max:
                return Observed(self._too_big(now), None, now.ctime_ns)
            data = self._read(fd, now.size)
        finally:
            os.close(fd)
        if len(data) > self._max:
            return Observed(self._too_big(now), None, now.ctime_ns)
        entry = Entry("file", data_sha(data), now.perm, len(data),
                      _cache_mtime(now.mtime_ns), ino=now.ino)
        return Observed(entry, data, now.ctime_ns)

    def _read(self, fd: int, size: int) -> bytes:
        """The file's content, up to the cap and one byte more (so that a file grown past the
        cap since its stat shows). Asking for its stat size first spares a cap-sized buffer
        per file (5 MiB, allocated and trimmed again for every small file); plain reads spare
        a file object's own fstat, ioctl and lseek."""
        return read_fd(fd, size, self._max + 1)

    def _opened_inside(self, fd: int, rel: str) -> bool:
        """Whether the file open as fd really is rel inside the workspace: a parent folder
        swapped for a symlink after the check would have the store copy a file from elsewhere
        (and a restore later put it where the agent can read it). Where /proc is missing, the
        check made before opening stands alone."""
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return True
        return opened == os.path.join(self._real_root, rel)

    def _too_big(self, st: DiskStat) -> Entry:
        return Entry("skipped", perm=st.perm, size=st.size, mtime_ns=st.mtime_ns,
                     note=f"over {size_text(self._max)} size cap", ino=st.ino)

    def record(
        self,
        stats: Mapping[str, DiskStat | None],
        known: Known,
        *,
        explicit: Iterable[str] = (),
        reported: Set[str] = frozenset(),
        trust_stat: bool,
        created_after_ns: int | None,
        save: bool,
    ) -> Changes:
        """Observe every path in stats; keep new states, and (save=True) store their blobs.

        Explicit paths always get an entry, changed or not. Paths the watcher reported are read
        even where trust_stat lets the stat cache vouch for the rest. created_after_ns, when
        set, lets a path never seen before count as created (absent earlier) if its ctime is not
        older.
        """
        if not os.path.isdir(self._root):
            raise WorkspaceMissing(f"workspace {self._root} no longer exists (moved or deleted?)")
        wanted = set(explicit)
        changes = Changes()
        pending = _Pending(self._blobs)
        for rel, st in stats.items():
            if under_way() and is_ours(os.path.join(self._root, rel)):
                continue  # a write of intentd's own, renamed over its target in a moment
            if not storable(rel):
                changes.skipped.append((rel, "file name is not valid UTF-8"))
                continue
            seen = known.get(rel)
            hint = None if seen else self.hints.get(rel)
            if hint is not None and (st is None or st.ctime_ns >= self.hints_since_ns):
                hint = None
            observed = self.observe(rel, st, seen[1] if seen else hint[1] if hint else None,
                                    (trust_stat or hint is not None) and rel not in reported)
            keep = self._note(changes, rel, observed, seen, rel in wanted, created_after_ns)
            if keep and observed.data is not None:
                if save:
                    pending.add(observed.entry.sha, observed.data)
                else:
                    changes.data[rel] = observed.data
        pending.finish(changes)
        return changes

    @staticmethod
    def _note(
        changes: Changes,
        rel: str,
        observed: Observed,
        seen: tuple[int, Entry] | None,
        wanted: bool,
        created_after_ns: int | None,
    ) -> bool:
        """Add rel's outcome to changes; True when it is a new state whose content must be kept."""
        entry = observed.entry
        if seen is None and entry.kind == "absent" and not wanted:
            return False
        if seen is not None and entry.same_state(seen[1]):
            if (entry.size, entry.mtime_ns, entry.ino) != (seen[1].size, seen[1].mtime_ns,
                                                           seen[1].ino):
                changes.stat_refresh.append((rel, seen[0], entry.size, entry.mtime_ns, entry.ino))
            if wanted:
                changes.entries[rel] = entry
                if entry.kind == "skipped":
                    changes.skipped.append((rel, entry.note))
            return False
        changes.entries[rel] = entry
        if entry.kind == "skipped":
            changes.skipped.append((rel, entry.note))
        # A path never seen in a complete run was absent since the run began, as long as it is
        # still absent or changed after the previous checkpoint (not, say, newly un-ignored).
        if seen is None and created_after_ns is not None and (
            not entry.present or observed.ctime_ns >= created_after_ns
        ):
            changes.created.append(rel)
        elif seen is None and entry.present and observed.ctime_ns > 0:
            changes.first_seen.append((rel, observed.ctime_ns))
        return entry.kind in ("file", "link")


def storable(rel: str) -> bool:
    """Names with bytes that are not UTF-8 (decoded as surrogates) cannot go in the manifest."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _cache_mtime(mtime_ns: int) -> int:
    return -1 if mtime_ns > time.time_ns() - RACY_NS else mtime_ns
