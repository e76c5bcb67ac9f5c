"""The pipeline in-process when no daemon runs: approvals go to a person prompt (a terminal, or a
refusal), each call's life run by the engine's lifecycle."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from intentd.daemon.agents.calls import CallResult
from intentd.daemon.engine.engine import Engine, Evaluation, Outcome
from intentd.daemon.engine.lifecycle import Answer, BlockingWork, NoAnswer, Reply
from intentd.daemon.tools.base import ToolKind
from intentd.daemon.trust.reaper import start_reaping

# Answer is the lifecycle's, re-exported: a person prompt returns it
__all__ = ["Answer", "LocalGateway", "NoPerson", "PersonPrompt", "PromptApprover",
           "deferred_interrupt"]


class NoPerson(Exception):
    """Nobody can be asked; the message says why (the call is refused, not rejected)."""


PersonPrompt = Callable[[Evaluation], Answer]  # asks a person (a terminal), or raises NoPerson


class PromptApprover:
    """The lifecycle's approver around a person prompt: NoPerson is a refusal, an interrupt
    (Ctrl-C at the prompt) withdraws the call."""

    def __init__(self, prompt: PersonPrompt) -> None:
        self.prompt = prompt

    def ask(self, ev: Evaluation) -> Reply:
        try:
            return self.prompt(ev)
        except NoPerson as exc:
            return NoAnswer(str(exc))

    def withdrawn(self, error: BaseException) -> str:
        return "withdrawn: interrupted"


class LocalGateway:
    mode = "in-process"

    def __init__(self, workspace: Path, agent: str, approver: PersonPrompt, *,
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
        outcome = self.engine.call(self.session, tool, args, batch,
                                   approver=PromptApprover(self.approver), blocking=_held_interrupt)
        return _result(outcome)

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


def _held_interrupt(need: BlockingWork) -> Outcome:
    """A command is stopped by Ctrl-C (its process group is killed); any other tool is a short
    atomic step that finishes and is recorded before the interrupt is delivered."""
    if need.ev.ctx.kind is ToolKind.COMMAND:
        return need.work()
    with deferred_interrupt():
        return need.work()


def _result(outcome: Outcome) -> CallResult:
    d = outcome.decision
    if outcome.result is None:
        return CallResult(decision="deny", stage=d.stage, reason=d.reason, output=d.reason,
                          feedback=outcome.feedback)
    result = outcome.result
    return CallResult(decision="allow", stage=d.stage, reason=d.reason, ok=result.ok,
                      output=result.output, approved_by=outcome.approved_by,
                      checkpoint_id=outcome.checkpoint_id, feedback=outcome.feedback)


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
