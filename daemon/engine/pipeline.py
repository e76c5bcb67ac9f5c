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


class Pipeline:
    def __init__(self, stages: Sequence[Stage] | None = None) -> None:
        self.stages = list(stages) if stages is not None else default_stages()

    def decide(self, ctx: CallContext) -> Decision:
        for stage in self.stages:
            try:
                decision = stage.check(ctx)
            except Exception as exc:
                log.exception("stage %s failed on %r", stage.name, ctx.name)
                return Decision.deny(stage.name, f"internal error in stage {stage.name} "
                                                 f"({type(exc).__name__}: {exc}); refused to be safe")
            if decision is not None:
                return decision
        return Decision.deny("pipeline", "no stage approved the call")
