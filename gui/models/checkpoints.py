"""One workspace's checkpoints as a table, newest first."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt

from intentd.gui.state.records import Checkpoint, local_clock
from intentd.gui.state.workspaces import Workspace, WorkspaceRegistry

from .table import WorkspaceTableModel


class CheckpointsModel(WorkspaceTableModel[Checkpoint]):
    HEADERS = ("ID", "Time", "Label", "Kind", "Files")

    def __init__(self, registry: WorkspaceRegistry, parent: QObject | None = None) -> None:
        super().__init__(registry, parent)
        registry.checkpoints_changed.connect(self._on_registry_checkpoints_changed)

    def _cell(self, checkpoint: Checkpoint, column: int) -> str:
        files = checkpoint.files
        kind = checkpoint.kind + (", scanned" if checkpoint.coverage else "")
        values = (checkpoint.id, local_clock(checkpoint.created_at), checkpoint.label,
                  kind, f"{len(files)}: {', '.join(files)}" if files else "0")
        return self._pick(values, column)

    def _role_data(self, checkpoint: Checkpoint, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            found = f"Found by: {checkpoint.coverage}\n" if checkpoint.coverage else ""
            return f"{checkpoint.id}\n{found}" + "\n".join(checkpoint.files)
        return None

    def checkpoint_at(self, row: int) -> Checkpoint | None:
        return self._row_at(row)

    def _on_registry_checkpoints_changed(self, path: str) -> None:
        self._reload_if_shown(path)

    def _load(self, workspace: Workspace | None) -> None:
        self._rows = list(workspace.checkpoints) if workspace else []
