"""The approval queue: calls waiting for a person, answered by whichever client answers first."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.engine import Evaluation
from intentd.daemon.engine.ledger import summarize_args
from intentd.daemon.engine.preview import proposed_diff
from intentd.daemon.server.events import EventBus
from intentd.daemon.server.rpc import RpcError

_ids = itertools.count(1)


@dataclass(frozen=True)
class Answer:
    resolution: str  # approved | rejected | withdrawn | timeout | stopping
    feedback: str | None = None
    by: str | None = None


@dataclass
class Approval:
    ev: Evaluation
    diff: str | None
    future: asyncio.Future[Answer]
    id: str = field(default_factory=lambda: f"a-{next(_ids)}")
    created_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        ctx = self.ev.ctx
        return {"id": self.id, "workspace": ctx.root, "session_id": ctx.session.id,
                "agent": ctx.session.agent, "intent_id": ctx.session.intent_id,
                "tool": ctx.name, "args": summarize_args(ctx.args) if self.diff else ctx.args,
                "stage": self.ev.decision.stage, "reason": self.ev.decision.reason,
                "diff": self.diff, "created_at": self.created_at, "batch": ctx.batch,
                "call_id": self.ev.call_id}


class ApprovalQueue:
    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.pending: dict[str, Approval] = {}

    def add(self, ev: Evaluation) -> Approval:
        approval = Approval(ev, proposed_diff(ev), asyncio.get_running_loop().create_future())
        self.pending[approval.id] = approval
        self.bus.publish(protocol.APPROVALS_REQUESTED, approval.to_json())
        return approval

    def respond(self, approval_id: str, approve: bool, feedback: str | None, by: str) -> None:
        resolution = "approved" if approve else "rejected"
        self._resolve(approval_id, Answer(resolution, feedback, by), strict=True)

    def withdraw(self, approval_id: str, resolution: str) -> None:
        self._resolve(approval_id, Answer(resolution), strict=False)

    def stop_all(self) -> None:
        for approval_id in list(self.pending):
            self._resolve(approval_id, Answer("stopping"), strict=False)

    def _resolve(self, approval_id: str, answer: Answer, strict: bool) -> None:
        approval = self.pending.pop(approval_id, None)
        if approval is None or approval.future.done():
            if strict:
                raise RpcError(protocol.UNKNOWN_APPROVAL, f"approval {approval_id!r} does not exist "
                                                          "or was already answered")
            return
        approval.future.set_result(answer)
        self.bus.publish(protocol.APPROVALS_RESOLVED, {
            "approval_id": approval_id, "resolution": answer.resolution,
            "feedback": answer.feedback, "workspace": approval.ev.ctx.root})

    def listing(self, workspace: str | None = None) -> list[dict[str, Any]]:
        return [a.to_json() for a in self.pending.values()
                if workspace is None or a.ev.ctx.root == workspace]

