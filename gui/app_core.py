"""The app's non-widget objects, wired together: connection, plain state, sync and commands."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject

from intentd.gui.commands import DaemonCommands
from intentd.gui.connection import DaemonConnection
from intentd.gui.state.activity import ActivityLog
from intentd.gui.state.approvals import PendingApprovals
from intentd.gui.state.workspaces import WorkspaceRegistry
from intentd.gui.sync import StateSync

CLIENT_NAME = "intentd-gui 0.1"


@dataclass
class AppCore:
    connection: DaemonConnection
    approvals: PendingApprovals
    workspaces: WorkspaceRegistry
    activity: ActivityLog
    sync: StateSync
    commands: DaemonCommands

    @classmethod
    def create(cls, socket_path: Path, extra_workspaces: list[str] | None = None,
               parent: QObject | None = None) -> AppCore:
        connection = DaemonConnection(socket_path, CLIENT_NAME, parent)
        approvals = PendingApprovals(parent)
        workspaces = WorkspaceRegistry(parent)
        activity = ActivityLog(parent)
        sync = StateSync(connection, approvals, workspaces, activity, extra_workspaces, parent)
        commands = DaemonCommands(connection, approvals, workspaces, parent)
        return cls(connection, approvals, workspaces, activity, sync, commands)
