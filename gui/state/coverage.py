"""What the daemon's checkpoints can see, per workspace: the file watcher's coverage and warm-up."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from intentd.gui.state.records import WatchCoverage


class CheckpointCoverage(QObject):
    """Filled from `checkpoints/list` and `checkpoints/progress`; views listen to the signals."""

    coverage_changed = Signal(str)  # workspace
    warm_up_changed = Signal(str)  # workspace: started, moved on or finished

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._coverage: dict[str, WatchCoverage] = {}
        self._warm_up: dict[str, tuple[int, int]] = {}  # workspace -> (files read, in all)

    def coverage(self, path: str | None) -> WatchCoverage | None:
        return self._coverage.get(path or "")

    def set_coverage(self, path: str, coverage: WatchCoverage | None) -> None:
        if coverage is None or self._coverage.get(path) == coverage:
            return
        self._coverage[path] = coverage
        self.coverage_changed.emit(path)

    def forget(self, path: str) -> None:
        """The workspace is gone: nothing of it is left to say."""
        had = self._coverage.pop(path, None), self._warm_up.pop(path, None)
        if had[0] is not None:
            self.coverage_changed.emit(path)
        if had[1] is not None:
            self.warm_up_changed.emit(path)

    def forget_warm_ups(self) -> None:
        for path in list(self._warm_up):
            self.set_warm_up(path, 0, 0, finished=True)

    def partial(self) -> dict[str, WatchCoverage]:
        """The workspaces whose command checkpoints scan some folders (or all) to be complete."""
        return {path: c for path, c in self._coverage.items() if c.blind_spots}

    def warm_up(self, path: str | None) -> tuple[int, int] | None:
        """(files read, files in all) while the daemon reads the workspace for its baseline."""
        return self._warm_up.get(path or "")

    def set_warm_up(self, path: str, done: int, total: int, finished: bool) -> None:
        if finished:
            if self._warm_up.pop(path, None) is None:
                return
        else:
            self._warm_up[path] = (done, total)
        self.warm_up_changed.emit(path)
