"""Stage 7: the command policy (deny / ask rules, unparseable and opaque commands)."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision


class CommandPolicyStage:
    name = "command_policy"

    def check(self, ctx: CallContext) -> Decision | None:
        verdict = ctx.command()
        if verdict is None:
            return None
        if verdict.outcome == "deny":
            return Decision.deny(self.name, verdict.reason)
        if verdict.outcome == "ask":
            ctx.must_ask = verdict.reason
        return None
