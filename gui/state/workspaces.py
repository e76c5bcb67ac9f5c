"""Workspaces known to the daemon and, for each, its intents, errors, sessions and settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from intentd.gui.state.records import Checkpoint, ConfigError, Intent


@dataclass
class Workspace:
    path: str
    intents: list[Intent] = field(default_factory=list)
    error: ConfigError | None = None  # the intents file is broken; `intents` are the last good
    warnings: list[str] = field(default_factory=list)
    selected: dict[str, str] = field(default_factory=dict)  # session id -> intent id
    sessions: int = 0
    config_errors: list[ConfigError] = field(default_factory=list)
    settings: dict[str, Any] | None = None  # settings/get result, loaded on demand
    checkpoints: list[Checkpoint] = field(default_factory=list)

    @property
    def intents_file(self) -> str:
        return self.error.file if self.error else f"{self.path}/.orchestration/active_intents.yaml"


class WorkspaceRegistry(QObject):
    """Every workspace the app shows, in the order it learned of them."""

    workspace_added = Signal(str)
    workspace_removed = Signal(str)  # its folder is gone
    workspace_changed = Signal(str)  # sessions or config errors changed
    intents_changed = Signal(str)
    intents_error_changed = Signal(str)
    settings_changed = Signal(str)
    checkpoints_changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._items: dict[str, Workspace] = {}

    def __contains__(self, path: object) -> bool:
        return path in self._items

    def paths(self) -> list[str]:
        return list(self._items)

    def get(self, path: str | None) -> Workspace | None:
        """The workspace at `path`; None for an unknown path, or for no path at all."""
        return self._items.get(path) if path else None

    def ensure(self, path: str) -> Workspace:
        workspace = self._items.get(path)
        if workspace is None:
            workspace = self._items[path] = Workspace(path)
            self.workspace_added.emit(path)
        return workspace

    def remove(self, path: str) -> None:
        if self._items.pop(path, None) is not None:
            self.workspace_removed.emit(path)

    def set_summary(self, path: str, sessions: int, errors: list[ConfigError]) -> None:
        workspace = self.ensure(path)
        workspace.sessions, workspace.config_errors = sessions, errors
        self.workspace_changed.emit(path)

    def set_intents(self, path: str, intents: list[Intent],
                    selected: dict[str, str] | None = None,
                    warnings: list[str] | None = None) -> None:
        workspace = self.ensure(path)
        workspace.intents = intents
        if selected is not None:
            workspace.selected = selected
        if warnings is not None:
            workspace.warnings = warnings
        self.intents_changed.emit(path)

    def set_warnings(self, path: str, warnings: list[str]) -> None:
        workspace = self.ensure(path)
        if workspace.warnings != warnings:
            workspace.warnings = warnings
            self.intents_changed.emit(path)

    def set_intents_error(self, path: str, error: ConfigError | None) -> None:
        workspace = self.ensure(path)
        if workspace.error != error:
            workspace.error = error
            self.intents_error_changed.emit(path)

    def session_opened(self, path: str) -> None:
        self.ensure(path).sessions += 1
        self.workspace_changed.emit(path)

    def session_closed(self, path: str, session_id: str) -> None:
        workspace = self._items.get(path)
        if workspace is None:
            return
        workspace.sessions = max(0, workspace.sessions - 1)
        self.workspace_changed.emit(path)
        if workspace.selected.pop(session_id, None) is not None:
            self.intents_changed.emit(path)

    def set_settings(self, path: str, settings: dict[str, Any]) -> None:
        self.ensure(path).settings = settings
        self.settings_changed.emit(path)

    def set_checkpoints(self, path: str, checkpoints: list[Checkpoint]) -> None:
        self.ensure(path).checkpoints = checkpoints
        self.checkpoints_changed.emit(path)
