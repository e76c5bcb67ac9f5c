"""The approval queue: calls waiting for a person, answered by whichever client answers first;
and the daemon's approver (QueueApprover), which puts a call in it for the lifecycle."""

# An approver is a connection on the person's side that subscribed to approvals/requested and
# said it answers them (the app, `intentd approvals --watch`). With none connected, a call from
# an agent that has its own prompt is handed to that prompt at once rather than left waiting.

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.engine import Evaluation
from intentd.daemon.engine.ledger import summarize_args
from intentd.daemon.engine.lifecycle import Answer, HandOff, NoAnswer, Reply
from intentd.daemon.engine.preview import proposed_diff
from intentd.daemon.protocol import messages
from intentd.daemon.server.events import EventBus
from intentd.daemon.server.rpc import MethodError

_ids = itertools.count(1)
HANDED_OFF = "handed_off"  # the resolution of a call given to the agent's own prompt
STOPPING = "stopping"


@dataclass(frozen=True)
class Resolution:
    """How a waiting approval ended: a client's answer, or why it no longer waits."""

    resolution: str  # approved | rejected | withdrawn | timeout | stopping | handed_off
    feedback: str | None = None
    by: str | None = None


@dataclass
class Approval:
    ev: Evaluation
    diff: str | None
    future: asyncio.Future[Resolution]
    native_prompt: bool = False  # the agent can ask the person itself
    id: str = field(default_factory=lambda: f"a-{next(_ids)}")
    created_at: float = field(default_factory=time.time)

    def message(self) -> messages.Approval:
        """What clients are shown: `approvals/requested`, `approvals/list`."""
        ctx = self.ev.ctx
        return messages.Approval(
            id=self.id, workspace=ctx.root, session_id=ctx.session.id, agent=ctx.session.agent,
            intent_id=ctx.session.intent_id, tool=ctx.name,
            args=summarize_args(ctx.args) if self.diff else ctx.args,
            stage=self.ev.decision.stage, reason=self.ev.decision.reason, diff=self.diff,
            created_at=self.created_at, batch=ctx.batch, call_id=self.ev.call_id,
            native_prompt=self.native_prompt)

    def to_json(self) -> dict[str, Any]:
        return self.message().to_json()


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
            self.bus.publish(protocol.APPROVERS_CHANGED,
                             messages.ApproversChanged(approvers=len(self.approvers)).to_json())
        if before and not self.approvers:
            self.hand_off_waiting()

    def hand_off_waiting(self) -> None:
        """The last approver left: calls whose agent has its own prompt go there now."""
        for approval in [a for a in self.pending.values() if a.native_prompt]:
            self._resolve(approval.id, Resolution(HANDED_OFF), strict=False)

    # -- answers ---------------------------------------------------------------------------------

    def respond(self, approval_id: str, approve: bool, feedback: str | None, by: str) -> None:
        resolution = "approved" if approve else "rejected"
        self._resolve(approval_id, Resolution(resolution, feedback, by), strict=True)

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
        self._resolve(approval_id, Resolution(resolution), strict=False)

    def stop_all(self) -> None:
        for approval_id in list(self.pending):
            self._resolve(approval_id, Resolution(STOPPING), strict=False)

    def _resolve(self, approval_id: str, answer: Resolution, strict: bool) -> None:
        approval = self.pending.pop(approval_id, None)
        if approval is None or approval.future.done():
            if strict:
                raise MethodError(protocol.UNKNOWN_APPROVAL, f"approval {approval_id!r} does not exist "
                                                          "or was already answered")
            return
        approval.future.set_result(answer)
        self.bus.publish(protocol.APPROVALS_RESOLVED, messages.ApprovalResolved(
            approval_id=approval_id, resolution=answer.resolution, feedback=answer.feedback,
            workspace=approval.ev.ctx.root).to_json())

    def listing(self, workspace: str | None = None) -> list[messages.Approval]:
        return [a.message() for a in self.pending.values()
                if workspace is None or a.ev.ctx.root == workspace]


class QueueApprover:
    """The daemon's approver for one call: it waits in the queue until a client answers, is
    handed to the agent's own prompt when the agent has one and no approver is connected (now,
    or when the last one leaves), and is refused when nobody answers within `timeout`."""

    def __init__(self, queue: ApprovalQueue, stopping: Callable[[], bool],
                 timeout: float | None, native_prompt: bool) -> None:
        self.queue, self.stopping = queue, stopping
        self.timeout, self.native_prompt = timeout, native_prompt

    async def ask(self, ev: Evaluation) -> Reply:
        if self.stopping():
            raise MethodError(protocol.DAEMON_STOPPING, "the daemon is stopping")
        if self.native_prompt and not self.queue.approvers:
            return HandOff()
        approval = self.queue.add(ev, self.native_prompt)
        try:
            answer = await asyncio.wait_for(asyncio.shield(approval.future), self.timeout)
        except TimeoutError:
            self.queue.withdraw(approval.id, "timeout")
            return NoAnswer(f"no person answered within {self.timeout:g} s; refused")
        except asyncio.CancelledError:
            self.queue.withdraw(approval.id, "withdrawn")  # the caller went away
            raise
        if answer.resolution in ("approved", "rejected"):
            # approved_by is "person" whichever client (or grant) answered: the ledger's word
            return Answer(answer.resolution == "approved", answer.feedback)
        if answer.resolution == HANDED_OFF:  # the last approver left while it waited
            return HandOff()
        if answer.resolution == STOPPING:
            raise MethodError(protocol.DAEMON_STOPPING, "the daemon is stopping; the call was not "
                                                        "run")
        return NoAnswer(f"approval {answer.resolution}")

    def withdrawn(self, error: BaseException) -> str:
        if isinstance(error, asyncio.CancelledError):
            return "withdrawn: the caller disconnected"
        if isinstance(error, MethodError) and error.code == protocol.DAEMON_STOPPING:
            return "the daemon stopped before a person answered"
        return f"withdrawn: {error}"
