"""The ordered list of decision stages; a stage that crashes denies (a gate fails closed)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.stages import Stage
from intentd.daemon.engine.stages.access import AccessStage
from intentd.daemon.engine.stages.approval import ApprovalStage
from intentd.daemon.engine.stages.command import CommandPolicyStage
from intentd.daemon.engine.stages.intent_gate import IntentGateStage
from intentd.daemon.engine.stages.mode import ModeStage
from intentd.daemon.engine.stages.protected import ProtectedPathsStage
from intentd.daemon.engine.stages.repetition import RepetitionStage
from intentd.daemon.engine.stages.scope import ScopeStage
from intentd.daemon.engine.stages.stale import StaleFileStage
from intentd.daemon.engine.stages.validate import ValidateStage

log = logging.getLogger(__name__)


def default_stages() -> list[Stage]:
    """DESIGN.md's order. Protected paths come before scope so their refusal is the one shown:
    no scope expansion can make `.orchestration/` writable."""
    return [
        ValidateStage(),
        ModeStage(),
        RepetitionStage(),
        IntentGateStage(),
        ProtectedPathsStage(),
        ScopeStage(),
        AccessStage(),
        StaleFileStage(),
        CommandPolicyStage(),
        ApprovalStage(),
    ]


def recheck_stages() -> list[Stage]:
    """What can change while a call waits for a person: the intents file, the ignore rules,
    symlinks under the paths, and the file an edit was based on."""
    return [ValidateStage(), IntentGateStage(), ProtectedPathsStage(), ScopeStage(), AccessStage(),
            StaleFileStage()]


class Pipeline:
    def __init__(self, stages: Sequence[Stage] | None = None) -> None:
        self.stages = list(stages) if stages is not None else default_stages()

    def decide(self, ctx: CallContext) -> Decision:
        decision = self.first_word(ctx)
        return decision or Decision.deny("pipeline", "no stage approved the call")

    def first_word(self, ctx: CallContext) -> Decision | None:
        """The first stage's refusal or answer; None when every stage lets the call pass."""
        for stage in self.stages:
            try:
                decision = stage.check(ctx)
            except Exception as exc:
                log.exception("stage %s failed on %r", stage.name, ctx.name)
                return Decision.deny(stage.name, f"internal error in stage {stage.name} "
                                                 f"({type(exc).__name__}: {exc}); refused to be safe")
            if decision is not None:
                return decision
        return None
