"""Live reload: watch the workspace root and `.orchestration/` (folders, not files), debounced."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.policy.persons import PERSONS_FILES, PERSONS_FOLDER

log = logging.getLogger(__name__)

# Config files live at the root or in .orchestration/; anything else is not our business.
WATCHED_NAMES = {PERSONS_FOLDER, *PERSONS_FILES}
DEBOUNCE_SECONDS = 0.1


class ConfigWatcher(FileSystemEventHandler):
    """Editors save by writing a temp file and renaming it over the target: watch the folder."""

    def __init__(self, workspace: Workspace, debounce: float = DEBOUNCE_SECONDS) -> None:
        self.workspace = workspace
        self.debounce = debounce
        self._observer: BaseObserver | None = None
        self._orchestration_watch: ObservedWatch | None = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.schedule(self, str(self.workspace.root), recursive=False)
        self._watch_orchestration()
        self._observer.start()

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        folder = self.workspace.root / ".orchestration"
        if not any(_concerns(Path(p), self.workspace.root, folder) for p in paths if p):
            return
        if any(Path(p) == folder for p in paths if p):
            self._watch_orchestration()  # the folder itself was created, moved or removed
        self._schedule_reload()

    def _watch_orchestration(self) -> None:
        observer = self._observer
        if observer is None:
            return
        folder = self.workspace.root / ".orchestration"
        with self._lock:
            if self._orchestration_watch is not None:
                try:
                    observer.unschedule(self._orchestration_watch)
                except (KeyError, OSError):
                    pass
                self._orchestration_watch = None
            if folder.is_dir():
                try:
                    self._orchestration_watch = observer.schedule(self, str(folder))
                except OSError as exc:
                    log.warning("cannot watch %s: %s", folder, exc)

    def _schedule_reload(self) -> None:
        with self._lock:
            self._timer = reload_later(self._timer, self.workspace, self.debounce)


def reload_later(timer: threading.Timer | None, workspace: Workspace,
                 debounce: float) -> threading.Timer:
    """Cancel `timer`, and reload the workspace once `debounce` seconds pass with no other
    change: an editor's save is several events."""
    if timer is not None:
        timer.cancel()
    timer = threading.Timer(debounce, _reload, (workspace,))
    timer.daemon = True
    timer.start()
    return timer


def _reload(workspace: Workspace) -> None:
    try:
        workspace.reload()
    except Exception:
        log.exception("reloading %s failed", workspace.root)


def _concerns(path: Path, root: Path, folder: Path) -> bool:
    return path.parent == folder or path == folder or (
        path.parent == root and path.name in WATCHED_NAMES)
