"""A person's answers beyond one call: several at once, the rest of a turn, with a grant; and
grants revoked or confirmed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection, RpcFailure
from intentd.gui.state.approvals import PendingApprovals


class AnswerCommands(QObject):
    answered = Signal(object, object)  # the ids the daemon answered, and its whole answer
    not_taken = Signal(object, str)  # the ids that still wait, and why

    def __init__(self, connection: DaemonConnection, approvals: PendingApprovals,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.connection, self.approvals = connection, approvals

    def answer(self, approval_ids: list[str], approve: bool, *, feedback: str | None = None,
               rest_of_turn: bool = False, grant: dict[str, Any] | None = None) -> None:
        params: dict[str, Any] = {"approval_ids": approval_ids, "rest_of_turn": rest_of_turn,
                                  "decision": protocol.APPROVE if approve else protocol.REJECT}
        if feedback:
            params["feedback"] = feedback
        if grant:
            params["grant"] = grant
        resolution = "approved" if approve else "rejected"

        def done(result: Any) -> None:
            ids = [i for i in (result or {}).get("answered") or [] if isinstance(i, str)]
            for approval_id in ids:
                self.approvals.remove(approval_id, resolution)
            self.answered.emit(ids, result if isinstance(result, dict) else {})

        def failed(failure: RpcFailure) -> None:
            self.not_taken.emit(approval_ids, failure.message)

        self.connection.request(protocol.APPROVALS_RESPOND, params, done, failed)

    def revoke(self, grant_id: str, failed: Callable[[str], None]) -> None:
        self.connection.request(protocol.GRANTS_REVOKE, {"grant_id": grant_id}, lambda _r: None,
                                lambda f: failed(f.message))

    def confirm(self, request_id: str, approve: bool, failed: Callable[[str], None]) -> None:
        self.connection.request(
            protocol.GRANTS_CONFIRM, {"request_id": request_id,
                                      "decision": protocol.APPROVE if approve else protocol.REJECT},
            lambda _r: None, lambda f: failed(f.message))
