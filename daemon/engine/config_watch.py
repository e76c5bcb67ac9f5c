"""Live reload on Linux: one inotify instance and one thread for the config folders of every
workspace (its root and `.orchestration/`), debounced per workspace.

watcher.py's watchdog observer took an inotify instance per workspace, and the daemon keeps
every workspace it opened: a person's IDE opening dozens of them, or an agent asking for the
intents of a hundred folders, used up the user's 128 instances, and their other programs
could watch nothing. watcher.py stays for systems without inotify.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import threading

import intentd.daemon.checkpoints.inotify as inotify
from intentd.daemon.engine.watcher import DEBOUNCE_SECONDS, WATCHED_NAMES, reload_later
from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.policy.persons import PERSONS_FOLDER

log = logging.getLogger(__name__)


class SharedConfigWatch:
    """Raises OSError when no inotify instance can be had (the caller falls back)."""

    def __init__(self, debounce: float = DEBOUNCE_SECONDS) -> None:
        self._ino = inotify.Inotify()
        self._debounce = debounce
        self._lock = threading.Lock()
        self._watched: dict[int, tuple[Workspace, bool]] = {}  # wd: (workspace, .orchestration/?)
        self._folders: dict[str, int] = {}  # a workspace's root: its .orchestration/ watch
        self._workspaces: list[Workspace] = []
        self._timers: dict[str, threading.Timer] = {}
        self._wake = os.pipe()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="intentd-config-watch")
        self._thread.start()

    def add(self, workspace: Workspace) -> None:
        """Watch the workspace's config; OSError when it cannot be (the inotify watch limit):
        unwatched, an edit that narrows a scope would never be seen, so it is not opened."""
        with self._lock:
            try:
                root = self._ino.add_watch(str(workspace.root))
            except OSError as exc:
                raise _unwatchable(workspace, exc) from None
            try:
                self._rewatch(workspace, strict=True)
            except OSError as exc:
                self._ino.rm_watch(root)
                raise _unwatchable(workspace, exc) from None
            self._watched[root] = (workspace, False)
            self._workspaces.append(workspace)

    def stop(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        os.write(self._wake[1], b"x")
        self._thread.join(timeout=5)
        with self._lock:
            for timer in self._timers.values():
                timer.cancel()
            self._ino.close()
        for fd in self._wake:
            os.close(fd)

    def _rewatch(self, workspace: Workspace, strict: bool = False) -> None:
        """Watch the workspace's `.orchestration/` as it is now: made, moved or replaced since
        (the lock is held). `strict`: a folder there that cannot be watched raises."""
        old = self._folders.pop(workspace.root_str, None)
        if old is not None:
            self._watched.pop(old, None)
            self._ino.rm_watch(old)
        try:
            wd = self._ino.add_watch(str(workspace.root / PERSONS_FOLDER))
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return  # not there (yet): its creation shows in the root's events
            if strict:
                raise
            log.error("cannot watch %s/%s for config changes (%s): edits there are seen at "
                      "the next change of the workspace root", workspace.root, PERSONS_FOLDER,
                      exc)
            return
        self._watched[wd] = (workspace, True)
        self._folders[workspace.root_str] = wd

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._ino.fileno(), select.POLLIN)
        poller.register(self._wake[0], select.POLLIN)
        while True:
            poller.poll()
            if self._stopping:
                return
            try:
                with self._lock:
                    changed = self._read()
                for workspace in changed:
                    self._schedule(workspace)
            except Exception:  # never the thread; what was read may be lost: all look again
                log.exception("reading config changes failed")
                for workspace in list(self._workspaces):
                    self._schedule(workspace)

    def _read(self) -> list[Workspace]:
        """The workspaces whose config may have changed, from the events queued now."""
        changed: dict[str, Workspace] = {}
        for event in self._ino.read():
            if event.mask & inotify.IN_Q_OVERFLOW:  # events lost: every workspace looks again
                for workspace in self._workspaces:
                    self._rewatch(workspace)
                    changed[workspace.root_str] = workspace
                continue
            entry = self._watched.get(event.wd)
            if entry is None:
                continue
            workspace, orchestration = entry
            if event.mask & inotify.IN_IGNORED:
                self._watched.pop(event.wd, None)
            name = os.fsdecode(event.name)
            if orchestration:
                if event.mask & (inotify.IN_MOVE_SELF | inotify.IN_DELETE_SELF):
                    self._rewatch(workspace)
                changed[workspace.root_str] = workspace
            elif name in WATCHED_NAMES:
                if name == PERSONS_FOLDER:
                    self._rewatch(workspace)
                changed[workspace.root_str] = workspace
        return list(changed.values())

    def _schedule(self, workspace: Workspace) -> None:
        with self._lock:
            if self._stopping:
                return
            key = workspace.root_str
            self._timers[key] = reload_later(self._timers.get(key), workspace, self._debounce)


def _unwatchable(workspace: Workspace, exc: OSError) -> OSError:
    return OSError(exc.errno, f"cannot watch {workspace.root} for changes of its intents and "
                              f"policy ({exc.strerror}); with fs.inotify.max_user_watches raised "
                              "it can be opened")
