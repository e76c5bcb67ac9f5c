"""What a person asks the daemon to do: answer approvals, change settings, diff and restore."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection, RpcFailure
from intentd.gui.state.approvals import PendingApprovals
from intentd.gui.state.records import FileDiff
from intentd.gui.state.workspaces import WorkspaceRegistry


class DaemonCommands(QObject):
    """Sends a person's actions; answers come back as signals (or as state changes)."""

    # The daemon did not take the answer to this approval id (the connection went, or it
    # refused the request): the approval still waits, and may be answered again.
    answer_not_taken = Signal(str)
    settings_update_failed = Signal(str)  # workspace; its settings in force did not change
    checkpoint_diff_loaded = Signal(str, object)  # checkpoint id, list[FileDiff]
    checkpoint_restored = Signal(str, object)  # checkpoint id, the restore result (dict)
    command_failed = Signal(str)  # a human-readable message

    def __init__(self, connection: DaemonConnection, approvals: PendingApprovals,
                 workspaces: WorkspaceRegistry, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.connection = connection
        self.approvals = approvals
        self.workspaces = workspaces

    def approve(self, approval_id: str) -> None:
        self._respond(approval_id, protocol.APPROVE, None)

    def reject(self, approval_id: str, feedback: str | None) -> None:
        self._respond(approval_id, protocol.REJECT, feedback or None)

    def _respond(self, approval_id: str, decision: str, feedback: str | None) -> None:
        params: dict[str, Any] = {"approval_id": approval_id, "decision": decision}
        if feedback:
            params["feedback"] = feedback
        resolution = "approved" if decision == protocol.APPROVE else "rejected"

        def answered(_result: Any) -> None:
            # approvals/resolved will say the same; whichever comes first removes the row.
            self.approvals.remove(approval_id, resolution)

        def failed(failure: RpcFailure) -> None:
            if failure.code == protocol.UNKNOWN_APPROVAL:
                self.approvals.remove(approval_id, "gone")  # answered elsewhere, or withdrawn
                self.command_failed.emit("That request was already answered or withdrawn.")
            else:
                self.answer_not_taken.emit(approval_id)
                self.command_failed.emit(f"Could not answer the request: {failure.message}")

        self.connection.request(protocol.APPROVALS_RESPOND, params, answered, failed)

    def update_settings(self, workspace: str, auto_approve: dict[str, Any]) -> None:
        def updated(result: Any) -> None:
            if isinstance(result, dict):
                self.workspaces.set_settings(workspace, result)

        def failed(failure: RpcFailure) -> None:
            self.settings_update_failed.emit(workspace)
            self._failed("Could not change the settings", failure)

        self.connection.request(
            protocol.SETTINGS_UPDATE, {"workspace": workspace, "auto_approve": auto_approve},
            updated, failed)

    def diff_checkpoint(self, workspace: str, checkpoint_id: str) -> None:
        def loaded(result: Any) -> None:
            items = result.get("diffs") if isinstance(result, dict) else None
            diffs = [FileDiff.from_json(d) for d in items or [] if isinstance(d, dict)]
            self.checkpoint_diff_loaded.emit(checkpoint_id, diffs)

        self.connection.request(
            protocol.CHECKPOINTS_DIFF,
            {"checkpoint_id": checkpoint_id, "workspace": workspace, "against": "current"},
            loaded, lambda f: self._failed("Could not diff the checkpoint", f))

    def restore_checkpoint(self, workspace: str, checkpoint_id: str) -> None:
        self.connection.request(
            protocol.CHECKPOINTS_RESTORE, {"checkpoint_id": checkpoint_id, "workspace": workspace},
            lambda r: self.checkpoint_restored.emit(checkpoint_id, r),
            lambda f: self._failed("Could not restore the checkpoint", f))

    def _failed(self, what: str, failure: RpcFailure) -> None:
        self.command_failed.emit(f"{what}: {failure.message}")
