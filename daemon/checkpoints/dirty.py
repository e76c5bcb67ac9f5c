"""Dirty tracking where inotify is missing (macOS, BSD): a watchdog observer marks workspace paths
changed since the last checkpoint, with a marker file as a barrier. Linux uses inotify_tracker."""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from watchdog import events
from watchdog.observers import Observer

from .model import Coverage
from .paths import in_git_dir, under

log = logging.getLogger(__name__)

# Only events that can mean a change. Opens and read-only closes are left out on purpose: with
# them every read in the workspace (ours included) costs a trip through watchdog's threads.
_EVENT_NAMES = (
    "FileCreatedEvent", "FileModifiedEvent", "FileDeletedEvent", "FileMovedEvent",
    "FileClosedEvent", "FileAttribEvent", "DirCreatedEvent", "DirDeletedEvent", "DirMovedEvent",
)
_EVENTS = [getattr(events, name) for name in _EVENT_NAMES if hasattr(events, name)]
_BARRIER_TIMEOUT = 0.5
_MOVE_HOLD_TIMEOUT = 1.0


class _OverflowLog(logging.Handler):
    """watchdog rebuilds its watches after an inotify queue overflow and only logs it; we need to know."""

    count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            _OverflowLog.count += 1


def _quiet_watchdog() -> None:
    """watchdog warns when a folder it already watches is added again (git creating folders under
    a watched tree does it); harmless for us, and noise on the daemon's stderr."""
    warnings.filterwarnings("ignore", message="Callback with id .* already exists",
                            category=RuntimeWarning, module="watchdog")


def _install_overflow_log() -> None:
    for name in ("watchdog.observers.inotify_c", "watchdog.observers.inotify_buffer"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, _OverflowLog) for h in logger.handlers):
            logger.addHandler(_OverflowLog(logging.WARNING))


@dataclass(frozen=True)
class DirtySnapshot:
    """Workspace-relative files and folders touched since `since_ns` (the previous drain), and
    folders not watched at all (each scanned with everything under it)."""

    files: frozenset[str]
    dirs: frozenset[str]
    since_ns: int
    unwatched: frozenset[str] = frozenset()


class _Handler(events.FileSystemEventHandler):
    def __init__(self, tracker: DirtyTracker) -> None:
        self._tracker = tracker

    def on_any_event(self, event: events.FileSystemEvent) -> None:
        self._tracker.on_event(event)


class DirtyTracker:
    """Collects changed paths from watchdog; `collect()` says when events may have been lost."""

    drains = 0  # the store's git_mark(): this watcher notes no `.git` entries (git_seen)

    def __init__(self, root: str, barrier_dir: str,
                 skipped_dir: Callable[[str], bool] = in_git_dir) -> None:
        """skipped_dir: folders whose changes never matter (CheckpointIgnore.skipped_dir); it runs on
        watchdog's thread, so it must not touch the file system."""
        self._root = root
        self._barrier_dir = barrier_dir
        self._skipped_dir = skipped_dir
        self._cond = threading.Condition()
        self._collect_lock = threading.Lock()
        self._files: set[str] = set()
        self._dirs: set[str] = set()
        self._lost = False
        self._since_ns = 0
        self._overflows = _OverflowLog.count
        self._awaited: str | None = None
        self._arrived = False
        self._token = 0
        self._observer: Any = None
        self.why_lost = ""  # why the last collect() returned None

    @property
    def running(self) -> bool:
        observer = self._observer
        if observer is None or not observer.is_alive():
            return False
        return all(emitter.is_alive() for emitter in observer.emitters)

    def coverage(self) -> Coverage:
        """These back ends watch a whole tree at once: all of it, or (not running) none of it."""
        running = self.running
        return Coverage(running, 1 if running else 0, (), "" if running else "the watcher stopped")

    def wait_ready(self, timeout: float | None = None) -> bool:
        return True

    def start(self, *, background: bool = False) -> bool:
        """Start watching; False (and a log line) when the platform refuses."""
        _install_overflow_log()
        _quiet_watchdog()
        os.makedirs(self._barrier_dir, mode=0o700, exist_ok=True)
        for name in os.listdir(self._barrier_dir):
            with suppress(OSError):
                os.unlink(os.path.join(self._barrier_dir, name))
        observer = Observer()
        handler = _Handler(self)
        try:
            observer.schedule(handler, self._root, recursive=True, event_filter=_EVENTS)
            observer.schedule(handler, self._barrier_dir, recursive=False, event_filter=_EVENTS)
            observer.start()
        except (OSError, RuntimeError) as exc:
            log.warning("checkpoints: cannot watch %s (%s); every command checkpoint will scan",
                        self._root, exc)
            return False
        if not _watches_ready(observer):
            log.warning("checkpoints: the watches on %s were not set up in time; every command "
                        "checkpoint will scan", self._root)
            observer.stop()
            observer.join(timeout=5)
            return False
        with self._cond:
            self._files, self._dirs, self._lost = set(), set(), False
            self._since_ns = time.time_ns()
        self._observer = observer
        return True

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    def on_event(self, event: events.FileSystemEvent) -> None:
        """Runs on watchdog's dispatch thread: record paths, nothing slow."""
        src = os.fsdecode(event.src_path)
        if under(src, self._barrier_dir):
            with self._cond:
                if event.event_type == "created" and src == self._awaited:
                    self._arrived = True
                    self._cond.notify_all()
            return
        paths = [src]
        dest = getattr(event, "dest_path", "")
        if dest:
            paths.append(os.fsdecode(dest))
        with self._cond:
            for path in paths:
                self._mark(path, event.is_directory)

    def _mark(self, path: str, is_dir: bool) -> None:
        if path == self._root:
            self._lost = True  # the workspace itself was deleted or moved
            return
        if not path.startswith(self._root + os.sep):
            return
        rel = path[len(self._root) + 1:].replace(os.sep, "/")
        if self._skipped_dir(rel):
            return
        (self._dirs if is_dir else self._files).add(rel)

    def mark_lost(self) -> None:
        """Force the next collect() to report lost events (e.g. a checkpoint failed after draining)."""
        with self._cond:
            self._lost = True

    def add(self, paths: list[str]) -> None:
        """Paths found changed by other means (a write through a hard link, which no event
        names): the next collect() gives them too."""
        with self._cond:
            self._files.update(paths)

    def git_known(self) -> list[str]:
        """None kept: see git_seen."""
        return []

    def git_seen(self, after: int) -> tuple[set[str], set[str], bool, dict[str, bool]]:
        """This watcher keeps no `.git` entries: as if it watched nothing."""
        return set(), set(), True, {"": False}

    def collect(self, *, drain: bool) -> DirtySnapshot | None:
        """Paths changed since the last drain, once every event up to now has arrived.
        None when events may be missing: the caller then scans the workspace."""
        with self._collect_lock:
            started = time.time_ns()
            ok = self.running and self._barrier() and self._settle_moves()
            with self._cond:
                lost = self._lost or not ok or _OverflowLog.count != self._overflows
                snapshot = DirtySnapshot(frozenset(self._files), frozenset(self._dirs), self._since_ns)
                if drain:
                    self._files, self._dirs, self._lost = set(), set(), False
                    self._overflows = _OverflowLog.count
                    self._since_ns = started
            self.why_lost = "events may have been lost" if lost else ""
            return None if lost else snapshot

    def _barrier(self) -> bool:
        """Create a file in a private folder watched by the same observer and wait for its event.

        inotify queues the events of one observer in order, so once ours arrives, the workspace's
        earlier events have been read. Twice, because the workspace's emitter thread may still be
        handing the last of them over when the first one lands.
        """
        for _ in range(2):
            self._token += 1
            path = os.path.join(self._barrier_dir, f"b{os.getpid()}-{self._token}")
            with self._cond:
                self._awaited, self._arrived = path, False
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except OSError:
                return False
            with self._cond:
                arrived = self._cond.wait_for(lambda: self._arrived, _BARRIER_TIMEOUT)
                self._awaited = None
            with suppress(OSError):
                os.unlink(path)
            if not arrived:
                return False
        return True

    def _settle_moves(self) -> bool:
        """Wait out a file moved out of the workspace: watchdog holds that event for up to 0.5 s
        (hoping to pair it with a move in) and every later workspace event queues behind it."""
        held = _held_moves(self._observer)
        if not held:
            return True
        deadline = time.monotonic() + _MOVE_HOLD_TIMEOUT
        while any(queue and queue[0][0] is head for queue, head in held):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return self._barrier()


def _watches_ready(observer: Any) -> bool:
    """Wait until every emitter has added its inotify watches. observer.start() returns before
    the emitter threads have done so, and a change made in between would be missed while the
    barrier (its own emitter, maybe ready first) says all is seen. Where the emitters are not
    watchdog's inotify ones this cannot be checked, so the tracker is not trusted at all."""
    deadline = time.monotonic() + _BARRIER_TIMEOUT
    while time.monotonic() < deadline:
        emitters = list(getattr(observer, "emitters", ()))
        if emitters and not all(hasattr(e, "_inotify") for e in emitters):
            return False
        if emitters and all(e._inotify is not None for e in emitters):
            return True
        time.sleep(0.002)
    return False


def _held_moves(observer: Any) -> list[tuple[Any, object]]:
    """(queue, held event) for each watchdog inotify emitter (watchdog >= 7) whose queue starts
    with an event it is holding back. Read only; other versions or platforms yield nothing."""
    held = []
    for emitter in getattr(observer, "emitters", ()):
        grouper = getattr(getattr(emitter, "_inotify", None), "_move_event_grouper", None)
        queue = getattr(getattr(grouper, "_queue", None), "_queue", None)
        with suppress(IndexError, TypeError):
            if queue and queue[0][2]:
                held.append((queue, queue[0][0]))
    return held
