"""What checkpoints cannot watch is never silent: a line in the Checkpoints tab, one in the status bar."""

from __future__ import annotations

import re
from html import escape, unescape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from intentd.gui.state.coverage import CheckpointCoverage
from intentd.gui.state.records import WatchCoverage, workspace_name
from intentd.gui.theme import colors

FIX = ("To watch every folder, raise the limit: <code>sudo sysctl "
       "fs.inotify.max_user_watches=524288</code> (and in /etc/sysctl.d/ to keep it).")


def coverage_sentence(coverage: WatchCoverage) -> str:
    """One paragraph (rich text) for a person: what the watcher sees, what is scanned, the fix."""
    reason = escape(coverage.reason)
    if coverage.mode == "watched":
        text = (f"The file watcher sees all {coverage.watched_folders:,} folders: a command "
                "checkpoint reads only what changed.")
        if coverage.overflows:
            text += (f" Its event queue overflowed {coverage.overflows:,} time(s); the checkpoint "
                     "after each scanned the whole workspace.")
        return text
    if coverage.mode == "scanning":
        why = f" ({reason})" if reason else ""
        return (f"<b>The file watcher is not running</b>{why}: every command checkpoint scans "
                "the whole workspace. No change is missed, but each one takes longer.")
    total = coverage.watched_folders + coverage.unwatched_count
    text = (f"<b>The file watcher cannot watch {coverage.unwatched_count:,} of {total:,} "
            f"folders</b> ({reason}). Those folders, with everything under them, are scanned at "
            "every command checkpoint: no change is missed, but each one takes longer.")
    return text + (f"<br>{FIX}" if "watch limit" in coverage.reason else "")


def status_words(partial: dict[str, WatchCoverage]) -> str:
    """The status bar's few words for the workspaces not fully watched ("" when none)."""
    folders = sum(c.unwatched_count for c in partial.values() if c.mode == "partial")
    blind = [workspace_name(p) for p, c in partial.items() if c.mode == "scanning"]
    words = [f"scanning {folders:,} unwatched folder{'s' if folders != 1 else ''}"] if folders else []
    if blind:
        words.append(f"scanning all of {', '.join(blind)} (no file watcher)")
    return f"Checkpoints: {'; '.join(words)}" if words else ""


class CoverageLine(QWidget):
    """Above the checkpoints of one workspace: the watcher's coverage, and the warm-up's progress
    while the daemon reads the workspace for its first checkpoint."""

    def __init__(self, coverage: CheckpointCoverage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._coverage = coverage
        self._path: str | None = None
        self.label = QLabel(self)
        self.label.setObjectName("checkpoint-coverage")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warm_up = QProgressBar(self)
        self.warm_up.setObjectName("checkpoint-warm-up")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.label)
        layout.addWidget(self.warm_up)
        coverage.coverage_changed.connect(self._on_coverage_changed)
        coverage.warm_up_changed.connect(self._on_coverage_changed)
        self._show()

    def set_workspace(self, path: str | None) -> None:
        self._path = path
        self._show()

    def _on_coverage_changed(self, path: str) -> None:
        if path == self._path:
            self._show()

    def _show(self) -> None:
        coverage, reading = self._coverage.coverage(self._path), self._coverage.warm_up(self._path)
        self.label.setText(coverage_sentence(coverage) if coverage else "")
        self.label.setVisible(coverage is not None)
        if coverage is not None:
            theme = colors()
            color = theme.ok if not coverage.blind_spots else theme.busy
            self.label.setStyleSheet(f"color: {color.name()}")
            self.label.setAccessibleName(unescape(re.sub(r"<[^>]+>", " ", self.label.text())))
        self.warm_up.setVisible(reading is not None)
        if reading is not None:
            done, total = reading
            self.warm_up.setRange(0, max(total, 1))
            self.warm_up.setValue(min(done, max(total, 1)))
            self.warm_up.setFormat(f"Reading the workspace for its first checkpoint: "
                                   f"{done:,} of {total:,} files")
        self.setVisible(coverage is not None or reading is not None)


class CoverageStatus(QLabel):
    """In the status bar while any workspace's checkpoints scan folders the watcher cannot see."""

    def __init__(self, coverage: CheckpointCoverage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._coverage = coverage
        self.setObjectName("checkpoint-coverage-status")
        coverage.coverage_changed.connect(self._on_coverage_changed)
        self._on_coverage_changed("")

    def _on_coverage_changed(self, _path: str) -> None:
        partial = self._coverage.partial()
        text = status_words(partial)
        self.setVisible(bool(text))
        if not text:
            self.clear()
            return
        self.setText(f"<span style='color:{colors().busy.name()}'>■</span> {escape(text)}")
        detail = "\n".join(f"{workspace_name(p)}: {c.unwatched_count:,} folder(s) scanned at "
                           f"every command checkpoint ({c.reason})" if c.mode == "partial"
                           else f"{workspace_name(p)}: {c.reason or 'no file watcher'}"
                           for p, c in sorted(partial.items()))
        self.setToolTip(detail)
        self.setAccessibleName(f"{text}. {detail}")
