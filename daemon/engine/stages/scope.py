"""Stage 5: every path a destructive tool writes must fall in the selected intent's owned_scope."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision


class ScopeStage:
    name = "scope"

    def check(self, ctx: CallContext) -> Decision | None:
        intent = ctx.intent
        if intent is None or not ctx.destructive:
            return None
        for path in ctx.writes():
            if path.relative is None:
                return Decision.deny(self.name, f"{path.raw} resolves to {path.absolute}, outside "
                                                f"the workspace; intent {intent.id} cannot own it")
            if not intent.owns(path.relative):
                scope = ", ".join(intent.owned_scope) or "nothing (empty owned_scope)"
                return Decision.deny(self.name, f"Scope violation: intent {intent.id} "
                                                f"({intent.name}) does not own {path.relative} "
                                                f"(owned_scope: {scope}). Request a scope expansion:"
                                                " ask the person to add it to the intent's "
                                                "owned_scope in .orchestration/active_intents.yaml.")
        return None
