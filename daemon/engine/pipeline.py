"""The pipeline as data: what every call goes through, phase by phase, in order.

    decide          the stages below, first word wins (engine.decide / engine.evaluate)
      (a person)    when the word is "ask": the approver passed to the lifecycle answers
    recheck         what may have changed while the person took their time
    before execute  steps that may still refuse; nothing irreversible happens before them
      execute       the tool, here; or, for a client that runs it itself, its report
    after           the audit, what the session learns, post-hooks, the receipt

The lifecycle that walks these phases is in lifecycle.py; the steps of the last two phases
are in steps.py. A stage that crashes denies: a gate fails closed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from intentd.daemon.engine import steps
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

# Deciding: the README's numbered stages. Protected paths come before scope so their refusal
# is the one shown: no scope expansion can make `.orchestration/` writable.
DECIDE: tuple[Stage, ...] = (
    ValidateStage(),        # 1
    ModeStage(),            # 2
    RepetitionStage(),      # 3
    IntentGateStage(),      # 4
    ProtectedPathsStage(),  # 5
    ScopeStage(),           # 6
    AccessStage(),          # 7
    StaleFileStage(),       # 8
    CommandPolicyStage(),   # 9
    ApprovalStage(),        # 10
)

# Rechecking a destructive call just before it runs: what can change while it waits for a
# person (the intents file, the ignore rules, symlinks under the paths, the file an edit was
# based on). Repetition and approval are not here: a recheck never counts the call again.
RECHECK: tuple[Stage, ...] = (
    ValidateStage(),
    IntentGateStage(),
    ProtectedPathsStage(),
    ScopeStage(),
    AccessStage(),
    StaleFileStage(),
)

# Before executing: each step may refuse (its Decision is recorded as the call's receipt).
BEFORE_EXECUTE: tuple[steps.Step, ...] = (
    steps.record_intent,    # the ledger's intent line: nothing runs unrecorded
    steps.hold_folders,     # an edit's folders, a command's cwd, held open: no swapped folder redirects them
    steps.one_name,         # an edit a hook agent makes itself: never through a hard link
    steps.pre_hooks,        # the policy's pre_tool hooks may veto
    steps.files_before,     # hashes (and text, for blame) of the files it writes
    steps.as_shown,         # an edit a person approved from its diff: over that file, or not at all
    steps.checkpoint,       # a destructive call's checkpoint; none taken, no run
)

# After executing (or after the client's report of a call it ran itself).
AFTER: tuple[steps.Step, ...] = (
    steps.scope_audit,      # a command's out-of-scope changes undone, or reported
    steps.learn,            # the session learns what it read and wrote (the stale-file check)
    steps.post_hooks,       # the policy's post_tool hooks, for a call run here
    steps.receipt,          # the ledger line, the trace, the tools/finished event
)


def default_stages() -> list[Stage]:
    return list(DECIDE)


def recheck_stages() -> list[Stage]:
    return list(RECHECK)


class Pipeline:
    """Stages run in order on one context; the first to answer or refuse has the word."""

    def __init__(self, stages: Sequence[Stage] | None = None) -> None:
        self.stages = list(stages) if stages is not None else default_stages()

    def decide(self, ctx: CallContext) -> Decision:
        decision = self.first_word(ctx)
        return decision or Decision.deny("pipeline", "no stage approved the call")

    def first_word(self, ctx: CallContext) -> Decision | None:
        """The first stage's refusal or answer; None when every stage lets the call pass. What
        a stage found goes into the context for the stages after it."""
        for stage in self.stages:
            try:
                word = stage.check(ctx)
            except Exception as exc:
                log.exception("stage %s failed on %r", stage.name, ctx.name)
                return Decision.deny(stage.name, f"internal error in stage {stage.name} "
                                                 f"({type(exc).__name__}: {exc}); refused to be safe")
            if word is None:
                continue
            if isinstance(word, Decision):
                return word
            ctx.take(word)
            if word.decision is not None:
                return word.decision
        return None
