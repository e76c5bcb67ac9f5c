"""The life of one call, in one place: decide, ask a person, recheck, run, record.

Every front-end goes through here: the daemon's tools/call and tools/authorize (whose approver
is the approval queue, handing off to an agent's own prompt), the in-process gateway (a
terminal, or a refusal when nobody can be asked) and `intentd check` (a dry run, which never
asks). A front-end plugs in an approver and, on an event loop, a way to run blocking work off
it; nothing else. The phases themselves are listed in pipeline.py.

The lifecycle is a generator: where it needs a person it yields PersonNeeded, where it would
block (hooks, a checkpoint, the tool) it yields BlockingWork, and the driver (Engine.call on a
thread, Engine.call_async on an event loop) answers and resumes it. So the same code serves
both, and the loop learns from the lifecycle, not from the policy, what must leave it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from intentd.daemon.engine.calls import Evaluation, Outcome
from intentd.daemon.engine.decision import Decision, Verdict
from intentd.daemon.engine.session import Session

if TYPE_CHECKING:
    from intentd.daemon.engine.engine import Engine


class Execution(Enum):
    """Where a call that may run, runs."""

    HERE = "here"            # the engine runs the tool (tools/call, in-process, MCP)
    ELSEWHERE = "elsewhere"  # the client runs it, then reports it (tools/authorize, tools/report)
    DRY_RUN = "dry_run"      # nothing runs; a person is never asked (`intentd check`)


# -- what an approver answers -------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    """A person's answer to a call the pipeline put to them."""

    approved: bool
    feedback: str | None = None
    by: str = "person"  # recorded as approved_by


@dataclass(frozen=True)
class NoAnswer:
    """Nobody answered (no one to ask, a timeout): the call is refused, not rejected, so the
    rest of its turn goes on."""

    reason: str


@dataclass(frozen=True)
class HandOff:
    """No approver is connected: the agent's own prompt asks the person (Execution.ELSEWHERE
    only; anywhere else it refuses)."""


Reply = Answer | NoAnswer | HandOff


class Approver(Protocol):
    """Answers, on the caller's thread, a call that needs a person."""

    def ask(self, ev: Evaluation) -> Reply: ...

    def withdrawn(self, error: BaseException) -> str:
        """Why the call did not run, recorded when `ask` raised (Ctrl-C, a stop)."""
        ...


class AsyncApprover(Protocol):
    """Answers, on an event loop, a call that needs a person."""

    async def ask(self, ev: Evaluation) -> Reply: ...

    def withdrawn(self, error: BaseException) -> str: ...


class Nobody:
    """An approver with nobody behind it: every call that needs a person is refused."""

    def __init__(self, reason: str = "it needs a person's approval and nobody can be asked") -> None:
        self.reason = reason

    def ask(self, ev: Evaluation) -> Reply:
        return NoAnswer(self.reason)

    def withdrawn(self, error: BaseException) -> str:
        return f"withdrawn: {type(error).__name__}"


NOBODY = Nobody()


# -- what the lifecycle needs from its driver ---------------------------------------------------

@dataclass(frozen=True)
class PersonNeeded:
    ev: Evaluation


@dataclass(frozen=True)
class BlockingWork:
    """Work that may block (hooks, a checkpoint, the tool): off the event loop, if there is one."""

    ev: Evaluation
    work: Callable[[], Outcome]


Need = PersonNeeded | BlockingWork
Life = Generator[Need, Any, Outcome]


def lifecycle(engine: Engine, session: Session, name: Any, args: Any, batch: str | None,
              execution: Execution, withdrawn: Callable[[BaseException], str]) -> Life:
    """One call from its arguments to its receipt. Decides (the pipeline, then a grant), counts
    it in its session, asks a person when the pipeline says so, then runs, authorizes or dry-runs
    it; every refusal on the way is recorded. Returns the final Outcome."""
    ev = engine.evaluate(session, name, args, batch, decided=skipped_turn(session, batch))
    decision, approved_by, feedback = ev.decision, ev.approved_by, None
    if execution is Execution.DRY_RUN:
        engine.apply_dry_run(ev)
        return Outcome(ev.call_id, decision)
    if decision.verdict is Verdict.ASK:
        try:
            reply = yield PersonNeeded(ev)
        except BaseException as error:  # the caller went away, Ctrl-C, the daemon stopping
            engine.refuse(ev, Decision.deny("approval", withdrawn(error)))
            raise
        decision, approved_by, feedback = settle(ev, reply, execution)
    if decision.verdict is Verdict.DENY:
        outcome = engine.refuse(ev, decision)
    elif execution is Execution.HERE:
        outcome = yield BlockingWork(ev, partial(engine.run, ev, approved_by, decision))
    elif engine.may_block(ev):
        outcome = yield BlockingWork(ev, partial(engine.authorize, ev, approved_by, decision))
    else:  # nothing slow to do: an event loop keeps it
        outcome = engine.authorize(ev, approved_by, decision)
    outcome.feedback = feedback
    return outcome


# -- the person's word, and the turn-rejection rule ---------------------------------------------

def skipped_turn(session: Session, batch: str | None) -> Decision | None:
    """A person rejected a call of this agent turn: the rest of the turn is skipped."""
    if batch is not None and session.rejected_batch == batch:
        return Decision.deny("approval", "skipped: the person rejected an earlier call of this turn")
    return None


def settle(ev: Evaluation, reply: Reply, execution: Execution
           ) -> tuple[Decision, str | None, str | None]:
    """The final decision after a person was asked, who approved it, and their feedback."""
    if isinstance(reply, Answer) and reply.approved:
        return Decision.allow("approval", approval_reason(reply.by)), reply.by, reply.feedback
    if isinstance(reply, Answer):
        # The other half of skipped_turn, for calls the daemon runs. A client that runs its
        # calls itself (a hook) hands the feedback to its agent, which acts on it in the same
        # turn: its next call is asked about again, not skipped.
        if ev.ctx.batch is not None and execution is Execution.HERE:
            ev.ctx.session.rejected_batch = ev.ctx.batch
        why = f"rejected by the person{': ' + reply.feedback if reply.feedback else ''}"
        return Decision.deny("approval", why), None, reply.feedback
    if isinstance(reply, HandOff) and execution is Execution.ELSEWHERE:
        return handed_off(ev), None, None
    reason = reply.reason if isinstance(reply, NoAnswer) else "nobody can be asked here"
    return Decision.deny("approval", reason), None, None


def handed_off(ev: Evaluation) -> Decision:
    """The "ask" an agent's own prompt puts to the person, when no approver is connected."""
    return Decision.ask("approval", f"{ev.decision.reason}; no approver is connected to intentd, "
                                    "so the agent's own prompt asks you")


def approval_reason(by: str) -> str:
    """"approved by a person" (`approved_by` "person"), "approved by the demo script", …"""
    return f"approved by {'a person' if by == 'person' else by}"


# -- the drivers --------------------------------------------------------------------------------

def drive(life: Life, approver: Approver,
          blocking: Callable[[BlockingWork], Outcome] | None = None) -> Outcome:
    """Run a lifecycle on this thread: the approver answers, blocking work runs here (through
    `blocking`, when the caller wraps it)."""
    sent: Any = None
    error: BaseException | None = None
    while True:
        try:
            need = life.throw(error) if error is not None else life.send(sent)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        sent, error = None, None
        try:
            if isinstance(need, PersonNeeded):
                sent = approver.ask(need.ev)
            else:
                sent = blocking(need) if blocking is not None else need.work()
        except BaseException as exc:  # handed back to the lifecycle, which records and re-raises
            error = exc


async def drive_async(life: Life, approver: AsyncApprover,
                      offload: Callable[[BlockingWork], Awaitable[Outcome]]) -> Outcome:
    """Run a lifecycle on an event loop: the approver is awaited, blocking work is offloaded."""
    sent: Any = None
    error: BaseException | None = None
    while True:
        try:
            need = life.throw(error) if error is not None else life.send(sent)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        sent, error = None, None
        try:
            if isinstance(need, PersonNeeded):
                sent = await approver.ask(need.ev)
            else:
                sent = await offload(need)
        except BaseException as exc:  # a cancelled caller included: recorded as withdrawn
            error = exc
