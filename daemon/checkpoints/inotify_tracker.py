"""Dirty tracking on Linux: one inotify watch per folder, read in order, every failure to watch known.

Events are read under one lock, by a thread while idle and by collect() itself: once collect() has
read the queue empty, every change made before it began is in hand (the kernel queues an event
before the write, create or rename that caused it returns). No marker file, no waiting.

What cannot be watched is never silent: a folder whose watch fails (the per-user watch limit, say)
is listed as unwatched and scanned, with everything under it, at every command checkpoint; a queue
overflow or the workspace itself moving makes the next checkpoint scan everything.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import threading
import time
from collections.abc import Callable

from . import inotify
from .dirty import DirtySnapshot
from .inotify import Event, Inotify, WatchFailed
from .model import Coverage
from .paths import in_git_dir, under

log = logging.getLogger(__name__)

# Past this many changed paths a scan is cheaper to hold than the list (a build, an unpacked archive).
MAX_DIRTY = 200_000
# How often a checkpoint tries again to watch folders that could not be watched.
RETRY_SECONDS = 5.0
# Woken by an event while idle, the thread lets more arrive for this long before it reads them:
# one read for a burst, not a wake per write taking the GIL from the calls. A checkpoint never
# waits for it (collect() reads the queue itself), and a queue that overflows meanwhile is known.
IDLE_LINGER_MS = 20
# `.git` entries under the workspace that are remembered; past this the caller walks
MAX_GIT_SEEN = 100_000
# The limit in force for this user namespace (the same as fs.inotify.max_user_watches outside one).
LIMIT_FILES = ("/proc/sys/user/max_inotify_watches", "/proc/sys/fs/inotify/max_user_watches")


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return (f"the inotify watch limit is reached ({_limit()} per user; raise it with "
                "sysctl fs.inotify.max_user_watches)")
    if exc.errno == errno.ENOMEM:
        return "the kernel is out of memory for inotify watches"
    return f"cannot watch: {exc.strerror}"


def _limit() -> str:
    for path in LIMIT_FILES:
        try:
            with open(path, encoding="ascii") as handle:
                return f"{int(handle.read()):,}"
        except (OSError, ValueError):
            continue
    return "unknown"


class InotifyTracker:
    """Collects changed paths under root; `coverage()` says what it cannot see."""

    def __init__(self, root: str, skipped_dir: Callable[[str], bool] = in_git_dir) -> None:
        """skipped_dir: folders whose changes never matter (CheckpointIgnore.skipped_dir); never watched."""
        self._root = root
        self._skipped_dir = skipped_dir
        self._lock = threading.Lock()
        self._ino: Inotify | None = None
        # watch descriptor -> folder ('' is the workspace); the only map of watches (a reverse
        # one cost 50 bytes a folder, 2.5 MB at 50k folders, for the rare moved-away folder)
        self._paths: dict[int, str] = {}
        # folder -> why it is not watched, and the drains when its watch first failed
        self._unwatched: dict[str, tuple[str, int]] = {}
        self._files: set[str] = set()
        self._dirs: set[str] = set()
        # `.git` entries seen (never watched inside, so never in _files), each with the drain it
        # came after (0: there when watching began): each makes its folder a repository git
        # reads config and hooks from
        self._git_seen: dict[str, int] = {}
        # each one's inode (device, number, ctime) -> that drain: a folder above it renamed
        # moves it without making it (its ctime stays; a new one, even on a reused number, has
        # another)
        self._git_inodes: dict[tuple[int, int, int], int] = {}
        self._git_lost_at = -1  # the last drain after which some may be missing (-1: none)
        self.drains = 0  # collect(drain=True) calls so far
        self._lost = ""  # why events may be missing since the last drain ("" when none are)
        self._since_ns = 0
        self._overflows = 0
        self._retried = 0.0
        self._thread: threading.Thread | None = None
        self._wake = os.pipe()
        self._stopping = False
        self._ready = threading.Event()
        self.why_lost = ""  # why the last collect() returned None

    @property
    def running(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive() and self._ino is not None

    def start(self, *, background: bool = False) -> bool:
        """Watch every folder; False when the platform has no inotify. background=True returns at
        once and sets the watches up on the thread (collect() waits for them)."""
        try:
            self._ino = Inotify()
        except OSError as exc:
            log.warning("checkpoints: cannot watch %s (%s); every command checkpoint will scan",
                        self._root, exc.strerror)
            return False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"checkpoint watch {os.path.basename(self._root)}")
        self._thread.start()
        if not background:
            self._ready.wait()
        return True

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    def stop(self) -> None:
        """Stop watching; safe to call twice."""
        if self._wake[1] < 0:
            return
        self._stopping = True
        os.write(self._wake[1], b"x")
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5)
        with self._lock:
            if self._ino is not None:
                self._ino.close()
                self._ino = None
        for fd in self._wake:
            os.close(fd)
        self._wake = (-1, -1)

    def mark_lost(self) -> None:
        """Force the next collect() to report lost events (e.g. a checkpoint failed after draining)."""
        with self._lock:
            self._lost = self._lost or "a checkpoint failed after reading the changes"

    def add(self, paths: list[str]) -> None:
        """Paths found changed by other means (a write through a hard link, which no event
        names): the next collect() gives them too."""
        with self._lock:
            self._files.update(paths)

    def git_seen(self, after: int) -> tuple[set[str], set[str], bool, dict[str, bool]]:
        """The `.git` entries (folders, files, links) still there: those made or moved in
        since the drain numbered `after` (self.drains just after it), those seen before it;
        whether events were lost since (some made may be missing anywhere), and the folders
        not watched (where none is ever seen), each with whether it was made since."""
        with self._lock:
            if self.running:
                self._pump()
            self._git_seen = {rel: drain for rel, drain in self._git_seen.items()
                              if _present(os.path.join(self._root, rel))}
            made = {rel for rel, drain in self._git_seen.items() if drain >= after}
            lost = self._git_lost_at >= after or bool(self._lost) or not self.running
            unwatched = {rel: drain >= after for rel, (_why, drain) in self._unwatched.items()}
            return made, set(self._git_seen) - made, lost, unwatched

    def git_known(self) -> list[str]:
        """Every `.git` entry seen under the workspace (as of the last events read)."""
        with self._lock:
            return sorted(self._git_seen)

    def coverage(self) -> Coverage:
        with self._lock:
            unwatched = tuple(sorted(self._unwatched))
            reason = self._unwatched[unwatched[0]][0] if unwatched else ""
            return Coverage(self.running and "" not in self._unwatched, len(self._paths),
                            unwatched, reason, self._overflows)

    def collect(self, *, drain: bool) -> DirtySnapshot | None:
        """Paths changed since the last drain, plus the folders to scan because they are not
        watched. None when events may be missing: the caller then scans the workspace."""
        self._ready.wait()
        started = time.time_ns()
        with self._lock:
            if not self.running:
                self.why_lost = "the watcher stopped"
                return None
            self._pump()
            self._retry_unwatched()
            self.why_lost = self._lost or self._unwatched.get("", ("", 0))[0]
            lost = bool(self.why_lost)
            snapshot = DirtySnapshot(frozenset(self._files), frozenset(self._dirs), self._since_ns,
                                     frozenset(self._unwatched))
            if drain:
                self._files, self._dirs, self._lost = set(), set(), ""
                self._since_ns = started
                self.drains += 1
        return None if lost else snapshot

    # -- the reading thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            with self._lock:
                self._watch_tree("")
                self._since_ns = time.time_ns()
            self._ready.set()
            self._listen()
        except Exception:  # the thread's death makes running False: checkpoints then scan
            log.exception("checkpoints: the watcher of %s stopped", self._root)
        finally:
            self._ready.set()

    def _listen(self) -> None:
        ino = self._ino
        if ino is None:
            return
        poller = select.poll()
        poller.register(ino.fileno(), select.POLLIN)
        poller.register(self._wake[0], select.POLLIN)
        stop = select.poll()
        stop.register(self._wake[0], select.POLLIN)
        while not self._stopping:
            poller.poll()
            if not self._stopping:
                stop.poll(IDLE_LINGER_MS)
            if self._stopping:
                return
            with self._lock:
                self._pump()

    def _pump(self) -> None:
        """Read and apply every queued event (the lock is held)."""
        if self._ino is None:
            return
        for event in self._ino.read():
            self._apply(event)
        if len(self._files) + len(self._dirs) > MAX_DIRTY:
            self._files, self._dirs = set(), set()
            self._lost = self._lost or "too many changes to list"

    def _apply(self, event: Event) -> None:
        if event.mask & inotify.IN_Q_OVERFLOW:
            self._overflows += 1
            self._lost = "the inotify event queue overflowed"
            self._git_lost_at = self.drains
            return
        base = self._paths.get(event.wd)
        if base is None:
            return  # a watch already dropped
        if event.mask & inotify.IN_IGNORED:
            self._forget(event.wd)
        if event.mask & (inotify.IN_IGNORED | inotify.IN_DELETE_SELF | inotify.IN_MOVE_SELF
                         | inotify.IN_UNMOUNT):
            if base == "":
                self._lost = "the workspace folder itself was moved or deleted"
            return  # a sub-folder's own move or deletion shows in its parent's events
        if not event.name:
            return
        name = os.fsdecode(event.name)
        rel = f"{base}/{name}" if base else name
        if self._skipped_dir(rel):
            if name == ".git" and event.mask & (inotify.IN_CREATE | inotify.IN_MOVED_TO):
                self._note_git(rel)
            return
        if not event.mask & inotify.IN_ISDIR:
            self._files.add(rel)
        elif event.mask & (inotify.IN_CREATE | inotify.IN_MOVED_TO):
            self._watch_tree(rel)  # what it holds already is found by scanning it
            self._dirs.add(rel)
        elif event.mask & inotify.IN_MOVED_FROM:
            self._drop_tree(rel)
            self._dirs.add(rel)
        elif event.mask & inotify.IN_DELETE:
            self._dirs.add(rel)

    # -- watches -----------------------------------------------------------------------------

    def _watch_tree(self, top: str, born: int | None = None) -> None:
        """Watch top and every folder under it; a folder that cannot be watched is listed, with
        its whole subtree, as unwatched. A `.git` found in it counts as made now, or at the
        drain `born` (a folder unwatched since then: what it holds is no newer than that)."""
        ino = self._ino
        assert ino is not None
        stack = [top]
        while stack:
            rel = stack.pop()
            if rel and self._skipped_dir(rel):
                if rel.rpartition("/")[2] == ".git":
                    self._note_git(rel, born)  # there at the start, or in a folder made since
                continue
            path = os.path.join(self._root, rel) if rel else self._root
            try:
                wd = ino.add_watch(path)
            except WatchFailed as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):  # gone already
                    self._unwatched.pop(rel, None)
                else:
                    blind_since = self._unwatched.get(rel, ("", self.drains))[1]
                    self._unwatched[rel] = (_why(exc), blind_since)
                continue
            self._paths[wd] = rel  # a folder watched already under another name: renamed
            self._unwatched.pop(rel, None)
            stack.extend(_subfolders(path, rel))

    def _note_git(self, rel: str, born: int | None = None) -> None:
        """A `.git` entry made now (or at the drain `born`; before the first drain: found
        there), unless it is one seen before under another path."""
        drain = self.drains if born is None else born
        if rel not in self._git_seen and len(self._git_seen) >= MAX_GIT_SEEN:
            self._git_lost_at = self.drains
            return
        try:
            st = os.lstat(os.path.join(self._root, rel))
        except OSError:
            self._git_seen[rel] = drain
            return
        key = (st.st_dev, st.st_ino, st.st_ctime_ns)
        if key not in self._git_inodes and len(self._git_inodes) >= MAX_GIT_SEEN:
            self._git_inodes.clear()  # forgetting makes a moved one look new: moved out, kept
        self._git_seen[rel] = self._git_inodes.setdefault(key, drain)

    def _drop_tree(self, top: str) -> None:
        """A folder moved away: its watches now follow it; drop them (a move back re-adds them)."""
        assert self._ino is not None
        for wd in [wd for wd, rel in self._paths.items() if under(rel, top)]:
            del self._paths[wd]
            self._ino.rm_watch(wd)
        for rel in [r for r in self._unwatched if under(r, top)]:
            del self._unwatched[rel]

    def _forget(self, wd: int) -> None:
        self._paths.pop(wd, None)

    def _retry_unwatched(self) -> None:
        """Watches may have been freed since: try the unwatched folders again, now and then.
        One that is watched now is scanned once more (it changed unseen until now)."""
        now = time.monotonic()
        if not self._unwatched or now - self._retried < RETRY_SECONDS:
            return
        self._retried = now
        for rel in sorted(self._unwatched):
            if rel in self._unwatched:
                self._watch_tree(rel, self._unwatched[rel][1])
                if rel not in self._unwatched:
                    self._dirs.add(rel)


def _present(path: str) -> bool:
    """False only when nothing is there: a folder above that cannot be searched hides nothing."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        pass
    return True


def _subfolders(path: str, rel: str) -> list[str]:
    """The folders in path, and a `.git` entry of any kind (a worktree's is a file)."""
    try:
        with os.scandir(path) as entries:
            return [f"{rel}/{e.name}" if rel else e.name for e in entries
                    if e.is_dir(follow_symlinks=False) or e.name == ".git"]
    except OSError:  # gone or unreadable: its parent's events still show it going
        return []
