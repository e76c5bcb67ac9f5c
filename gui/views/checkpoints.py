"""Checkpoints of a workspace: each one's diff against the files now, and restore (confirmed)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.commands import DaemonCommands
from intentd.gui.diff.view import DiffPane
from intentd.gui.models.checkpoints import CheckpointsModel
from intentd.gui.state.coverage import CheckpointCoverage
from intentd.gui.state.records import Checkpoint, FileDiff
from intentd.gui.state.workspaces import WorkspaceRegistry
from intentd.gui.views.checkpoint_coverage import CoverageLine
from intentd.gui.views.tables import make_table, reselect


class CheckpointsPane(QWidget):
    """Diffs only while on screen: "now" moves with every call that ran, and a diff costs the
    daemon a read of every file in the checkpoint."""

    REFRESH_MS = 100  # at most one diff request per this long, however many calls ran

    def __init__(self, registry: WorkspaceRegistry, commands: DaemonCommands,
                 parent: QWidget | None = None,
                 coverage: CheckpointCoverage | None = None) -> None:
        super().__init__(parent)
        self.commands = commands
        self.coverage = CoverageLine(coverage or CheckpointCoverage(self), self)
        self.model = CheckpointsModel(registry, self)
        self.table = make_table(self, "Checkpoints", self.model, (90, 70, 260, 70))
        self.diff = DiffPane(self)
        self.restore_button = QPushButton("&Restore…", self)
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self.ask_to_restore)
        self.status = QLabel(self)
        self.confirmation: QMessageBox | None = None
        self._shown: str | None = None  # the checkpoint selected, kept across reloads
        self._diff_shown: tuple[str, str | None, str] | None = None
        self._refresh = QTimer(self, singleShot=True, interval=self.REFRESH_MS)
        self._refresh.timeout.connect(self._on_refresh_timeout)
        self.table.selectionModel().currentRowChanged.connect(
            self._on_selection_current_row_changed)
        self.model.modelReset.connect(self._on_model_reset)
        commands.checkpoint_diff_loaded.connect(self._on_commands_checkpoint_diff_loaded)
        commands.checkpoint_restored.connect(self._on_commands_checkpoint_restored)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.restore_button)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.diff)
        split.setSizes([200, 500])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.coverage)
        layout.addWidget(split, 1)
        layout.addLayout(bottom)
        self.setFocusProxy(self.table)

    def set_workspace(self, path: str | None) -> None:
        self.model.set_workspace(path)
        self.coverage.set_workspace(path)

    def refresh_diff(self) -> None:
        """Diff the selected checkpoint against the files again ("now" moves on), soon, and
        only if the pane is on screen (showing it refreshes the diff)."""
        if self.isVisible() and not self._refresh.isActive():
            self._refresh.start()

    def _on_refresh_timeout(self) -> None:
        checkpoint = self.current()
        if checkpoint is not None and self.model.workspace and self.isVisible():
            self.commands.diff_checkpoint(self.model.workspace, checkpoint.id)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.refresh_diff()

    def current(self) -> Checkpoint | None:
        index = self.table.currentIndex()
        return self.model.checkpoint_at(index.row()) if index.isValid() else None

    def ask_to_restore(self) -> None:
        """A window-modal question (no nested event loop); restores on Yes."""
        checkpoint, workspace = self.current(), self.model.workspace
        if checkpoint is None or workspace is None:
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Restore checkpoint",
                          f"Restore {workspace} to {checkpoint.id} (“{checkpoint.label}”)? "
                          "Files changed since then go back to how they were; files it never saw stay."
                          "\n\nThe files as they are now are saved first, in a "
                          "safety checkpoint, so the restore can be undone.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                          self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.accepted.connect(lambda: self.commands.restore_checkpoint(workspace, checkpoint.id))
        box.finished.connect(box.deleteLater)
        self.confirmation = box
        box.open()

    def _on_model_reset(self) -> None:
        # A new checkpoint (checkpoints/created) must not move the selection: Restore… acts
        # on the one the person chose.
        if not reselect(self.table, self._id_at, self._shown):
            self._show_diff(None, None, "")
            self.restore_button.setEnabled(False)

    def _id_at(self, row: int) -> str | None:
        checkpoint = self.model.checkpoint_at(row)
        return checkpoint.id if checkpoint else None

    def _on_selection_current_row_changed(self, current: QModelIndex, _previous: QModelIndex
                                          ) -> None:
        checkpoint = self.model.checkpoint_at(current.row()) if current.isValid() else None
        if checkpoint is not None:
            self._shown = checkpoint.id
        self.restore_button.setEnabled(checkpoint is not None)
        self.refresh_diff()

    def _on_commands_checkpoint_diff_loaded(self, checkpoint_id: str, diffs: list[FileDiff]
                                            ) -> None:
        checkpoint = self.current()
        if checkpoint is None or checkpoint.id != checkpoint_id:
            return  # an answer for a checkpoint no longer selected
        text = "".join(d.unified if d.unified.endswith("\n") else d.unified + "\n"
                       for d in diffs if d.unified)
        path = diffs[0].path if len(diffs) == 1 else None
        self._show_diff(text or None, path,
                        f"{checkpoint.label} → now" if diffs else "No change since then")

    def _show_diff(self, text: str | None, path: str | None, title: str) -> None:
        # Most refreshes find the same diff: parsing and laying it out again is wasted work.
        shown = (text or "", path, title)
        if shown != self._diff_shown:
            self._diff_shown = shown
            self.diff.set_diff(text, path, title)

    def _on_commands_checkpoint_restored(self, checkpoint_id: str, result: object) -> None:
        restored = result.get("restored", []) if isinstance(result, dict) else []
        safety = result.get("safety_checkpoint_id") if isinstance(result, dict) else None
        self.status.setText(f"Restored {len(restored)} file(s) from {checkpoint_id}; "
                            f"undo with safety checkpoint {safety}.")
