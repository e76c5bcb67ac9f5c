"""Stage 9: the command policy (deny / ask rules, unparseable and opaque commands)."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.stages import Finding


class CommandPolicyStage:
    name = "command_policy"

    def check(self, ctx: CallContext) -> Decision | Finding | None:
        verdict = ctx.command()
        if verdict is None:
            return None
        if verdict.outcome == "deny":
            return Decision.deny(self.name, verdict.reason)
        if verdict.outcome == "ask":
            return Finding(must_ask=verdict.reason)  # for the approval stage: a person, always
        return None
