"""Stage 4: destructive tools need the session's selected intent, still listed and selectable."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.intents import Intent
from intentd.daemon.engine.stages import Finding

GATE_MESSAGE = "You must cite a valid active Intent ID."


class IntentGateStage:
    name = "intent_gate"

    def check(self, ctx: CallContext) -> Decision | Finding | None:
        if ctx.name == "select_active_intent":
            return self._check_selection(ctx, ctx.args["intent_id"])
        if not ctx.destructive:
            return None
        selected = ctx.session.intent_id
        intent = self._selectable(ctx, selected) if selected else None
        if intent is None:
            why = ("No intent is selected in this session." if not selected else
                   f"The selected intent {selected!r} is {self._gone_why(ctx, selected)}.")
            return Decision.deny(self.name, f"{GATE_MESSAGE} {why} {self._how_to_fix(ctx)}")
        return Finding(intent=intent)  # scope checks the writes against it

    def _check_selection(self, ctx: CallContext, intent_id: str) -> Decision | None:
        if self._selectable(ctx, intent_id) is None:
            return Decision.deny(self.name, f"{GATE_MESSAGE} {intent_id!r} is "
                                            f"{self._gone_why(ctx, intent_id)}. {self._how_to_fix(ctx)}")
        return None

    @staticmethod
    def _selectable(ctx: CallContext, intent_id: str) -> Intent | None:
        intent = ctx.config.intents.get(intent_id)
        if intent is None or intent.status not in ctx.config.policy.selectable_statuses:
            return None
        return intent

    @staticmethod
    def _gone_why(ctx: CallContext, intent_id: str) -> str:
        intent = ctx.config.intents.get(intent_id)
        if intent is None and ctx.config.intents_error is not None:
            # the real cause, not "not listed": the file does not load (its first problem named)
            error = ctx.config.intents_error
            return (f"not among the intents in force: the intents file does not load "
                    f"({error.path}:{error.line}: {error.message})")
        if intent is None and not ctx.config.intents.exists:
            return ("not listed: there is no intents file (.orchestration/active_intents.yaml; "
                    "`intentd init` writes one to edit)")
        if intent is None:
            return "not listed in .orchestration/active_intents.yaml"
        return f"in status {intent.status}, which is not selectable"

    @staticmethod
    def _how_to_fix(ctx: CallContext) -> str:
        ids = [i.id for i in ctx.config.intents.selectable(ctx.config.policy.selectable_statuses)]
        if not ids and ctx.config.intents_error is not None:
            return "No intent is selectable until a person fixes .orchestration/active_intents.yaml."
        if not ids:
            return ("No intent is selectable: a person must add one with status "
                    f"{ctx.config.policy.selectable_statuses[0]} to .orchestration/active_intents.yaml.")
        return f"Call select_active_intent with one of: {', '.join(ids)}."
