"""The approval queue: calls waiting for a person, answered by whichever client answers first."""

# An approver is a connection on the person's side that subscribed to approvals/requested and
# said it answers them (the app, `intentd approvals --watch`). With none connected, a call from
# an agent that has its own prompt is handed to that prompt at once rather than left waiting.

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.engine import Evaluation
from intentd.daemon.engine.ledger import summarize_args
from intentd.daemon.engine.preview import proposed_diff
from intentd.daemon.server.events import EventBus
from intentd.daemon.server.rpc import MethodError

_ids = itertools.count(1)
HANDED_OFF = "handed_off"  # the resolution of a call given to the agent's own prompt


def handed_off(ev: Evaluation) -> Decision:
    """The "ask" an agent's own prompt puts to the person, when no approver is connected."""
    return Decision.ask("approval", f"{ev.decision.reason}; no approver is connected to intentd, "
                                    "so the agent's own prompt asks you")


@dataclass(frozen=True)
class Answer:
    resolution: str  # approved | rejected | withdrawn | timeout | stopping | handed_off
    feedback: str | None = None
    by: str | None = None


@dataclass
class Approval:
    ev: Evaluation
    diff: str | None
    future: asyncio.Future[Answer]
    native_prompt: bool = False  # the agent can ask the person itself
    id: str = field(default_factory=lambda: f"a-{next(_ids)}")
    created_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        ctx = self.ev.ctx
        return {"id": self.id, "workspace": ctx.root, "session_id": ctx.session.id,
                "agent": ctx.session.agent, "intent_id": ctx.session.intent_id,
                "tool": ctx.name, "args": summarize_args(ctx.args) if self.diff else ctx.args,
                "stage": self.ev.decision.stage, "reason": self.ev.decision.reason,
                "diff": self.diff, "created_at": self.created_at, "batch": ctx.batch,
                "call_id": self.ev.call_id, "native_prompt": self.native_prompt}


class ApprovalQueue:
    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.pending: dict[str, Approval] = {}
        self.approvers: set[Any] = set()  # connections that answer approvals

    def add(self, ev: Evaluation, native_prompt: bool = False) -> Approval:
        approval = Approval(ev, proposed_diff(ev), asyncio.get_running_loop().create_future(),
                            native_prompt)
        self.pending[approval.id] = approval
        self.bus.publish(protocol.APPROVALS_REQUESTED, approval.to_json())
        return approval

    # -- approvers -------------------------------------------------------------------------------

    def set_approver(self, conn: Any, answers: bool) -> None:
        before = len(self.approvers)
        if answers:
            self.approvers.add(conn)
        else:
            self.approvers.discard(conn)
        if len(self.approvers) != before:
            self.bus.publish(protocol.APPROVERS_CHANGED, {"approvers": len(self.approvers)})
        if before and not self.approvers:
            self.hand_off_waiting()

    def hand_off_waiting(self) -> None:
        """The last approver left: calls whose agent has its own prompt go there now."""
        for approval in [a for a in self.pending.values() if a.native_prompt]:
            self._resolve(approval.id, Answer(HANDED_OFF), strict=False)

    # -- answers ---------------------------------------------------------------------------------

    def respond(self, approval_id: str, approve: bool, feedback: str | None, by: str) -> None:
        resolution = "approved" if approve else "rejected"
        self._resolve(approval_id, Answer(resolution, feedback, by), strict=True)

    def respond_many(self, approval_ids: list[str], approve: bool, feedback: str | None,
                     by: str) -> list[str]:
        """Answer each that still waits; the ids answered (answered elsewhere meanwhile: left)."""
        answered = []
        for approval_id in approval_ids:
            if approval_id in self.pending:
                self.respond(approval_id, approve, feedback, by)
                answered.append(approval_id)
        if not answered:
            raise MethodError(protocol.UNKNOWN_APPROVAL, f"approval {approval_ids[0]!r} does not "
                           "exist or was already answered" if len(approval_ids) == 1 else
                           "none of those approvals still waits: each was already answered or "
                           "withdrawn")
        return answered

    def rest_of_turn(self, approval_id: str) -> list[str]:
        """The approval and every other pending call of its agent turn (same session and batch)."""
        approval = self.get(approval_id)
        ctx = approval.ev.ctx
        if ctx.batch is None:
            return [approval_id]
        return [a.id for a in self.pending.values()
                if a.ev.ctx.session is ctx.session and a.ev.ctx.batch == ctx.batch]

    def get(self, approval_id: str) -> Approval:
        approval = self.pending.get(approval_id)
        if approval is None:
            raise MethodError(protocol.UNKNOWN_APPROVAL, f"approval {approval_id!r} does not exist "
                                                      "or was already answered")
        return approval

    def withdraw(self, approval_id: str, resolution: str) -> None:
        self._resolve(approval_id, Answer(resolution), strict=False)

    def stop_all(self) -> None:
        for approval_id in list(self.pending):
            self._resolve(approval_id, Answer("stopping"), strict=False)

    def _resolve(self, approval_id: str, answer: Answer, strict: bool) -> None:
        approval = self.pending.pop(approval_id, None)
        if approval is None or approval.future.done():
            if strict:
                raise MethodError(protocol.UNKNOWN_APPROVAL, f"approval {approval_id!r} does not exist "
                                                          "or was already answered")
            return
        approval.future.set_result(answer)
        self.bus.publish(protocol.APPROVALS_RESOLVED, {
            "approval_id": approval_id, "resolution": answer.resolution,
            "feedback": answer.feedback, "workspace": approval.ev.ctx.root})

    def listing(self, workspace: str | None = None) -> list[dict[str, Any]]:
        return [a.to_json() for a in self.pending.values()
                if workspace is None or a.ev.ctx.root == workspace]
