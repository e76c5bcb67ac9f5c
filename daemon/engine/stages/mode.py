"""Stage 2: plan mode refuses every tool that would change something."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.session import Mode


class ModeStage:
    name = "mode"

    def check(self, ctx: CallContext) -> Decision | None:
        if ctx.session.mode is Mode.PLAN and ctx.destructive:
            return Decision.deny(self.name, f"{ctx.name} changes things and the session is in plan "
                                            "mode: read and plan only, or switch to act mode")
        return None
