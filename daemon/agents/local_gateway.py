"""The pipeline in-process when no daemon runs: approvals go to a callback (terminal, refusal)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from intentd.daemon.agents.calls import CallResult, approval_reason
from intentd.daemon.engine.decision import Decision, Verdict
from intentd.daemon.engine.engine import Engine, Evaluation, Outcome
from intentd.daemon.tools.base import ToolKind
from intentd.daemon.trust.reaper import start_reaping


@dataclass(frozen=True)
class Answer:
    """A person's answer to a call the pipeline put to them."""

    approved: bool
    feedback: str | None = None
    by: str = "person"  # recorded as approved_by


class NoPerson(Exception):
    """Nobody can be asked; the message says why (the call is refused, not rejected)."""


Approver = Callable[[Evaluation], Answer]


class LocalGateway:
    mode = "in-process"

    def __init__(self, workspace: Path, agent: str, approver: Approver, *,
                 engine: Engine | None = None, home: Path | None = None,
                 where: str = "approvals on this terminal") -> None:
        """`engine` is shared and stays open; else one is made (state under `home`) and closed
        with the gateway."""
        # Commands run here stay in this process's tree even when they double-fork, and the
        # daemon sees this runner above them (trust/sides.py): none passes for the person.
        start_reaping()
        self.engine = engine or Engine(home, watch=True)
        self._owns_engine = engine is None
        self.approver, self.where = approver, where
        self.session = self.engine.open_session(workspace, agent=agent)
        self.session_id = self.session.id
        self.workspace = self.session.workspace.root

    def call(self, tool: str, args: dict[str, Any], batch: str | None = None) -> CallResult:
        ev = self.engine.evaluate(self.session, tool, args, batch)
        verdict = ev.decision.verdict
        if verdict is Verdict.DENY:
            return _result(self.engine.refuse(ev))
        approved_by, feedback = "auto", None
        if verdict is Verdict.ASK:
            try:
                answer = self.approver(ev)
            except NoPerson as exc:
                return _result(self.engine.refuse(ev, Decision.deny("approval", str(exc))))
            except BaseException:  # Ctrl-C at the prompt: the call is recorded as not run
                self.engine.refuse(ev, Decision.deny("approval", "withdrawn: interrupted"))
                raise
            if not answer.approved:
                return self._rejected(ev, answer.feedback)
            approved_by, feedback = answer.by, answer.feedback
            # what the receipt records: the final word, as the daemon's tools/call does
            ev.decision = Decision.allow("approval", approval_reason(answer.by))
        # A command is stopped by Ctrl-C (its process group is killed); any other tool is a
        # short atomic step that finishes and is recorded before the interrupt is delivered.
        if ev.ctx.kind is ToolKind.COMMAND:
            outcome = self.engine.run(ev, approved_by)
        else:
            with deferred_interrupt():
                outcome = self.engine.run(ev, approved_by)
        return _result(outcome, approved_by, feedback)

    def _rejected(self, ev: Evaluation, feedback: str | None) -> CallResult:
        if ev.ctx.batch is not None:
            self.session.rejected_batch = ev.ctx.batch
        why = f"rejected by the person{': ' + feedback if feedback else ''}"
        return _result(self.engine.refuse(ev, Decision.deny("approval", why)), None, feedback)

    def intents(self) -> list[dict[str, Any]]:
        return list(self.session.workspace.config.intents_json())

    def restore(self, checkpoint_id: str) -> dict[str, Any]:
        """The `checkpoints/restore` answer (docs/protocol.md), as the daemon gives it."""
        done = self.engine.checkpoint_store(self.session.workspace).restore(checkpoint_id)
        return dict(done.to_json())

    def close(self) -> None:
        self.engine.forget_session(self.session)
        if self._owns_engine:
            self.engine.close()


def _result(outcome: Outcome, approved_by: str | None = None,
            feedback: str | None = None) -> CallResult:
    d = outcome.decision
    if outcome.result is None:
        return CallResult(decision="deny", stage=d.stage, reason=d.reason, output=d.reason,
                          feedback=feedback)
    result = outcome.result
    return CallResult(decision="allow", stage=d.stage, reason=d.reason, ok=result.ok,
                      output=result.output, approved_by=outcome.approved_by or approved_by,
                      checkpoint_id=outcome.checkpoint_id, feedback=feedback)


@contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Hold SIGINT until the block ends, then raise KeyboardInterrupt (main thread only)."""
    caught: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    except ValueError:  # not the main thread: nothing to defer
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            raise KeyboardInterrupt
