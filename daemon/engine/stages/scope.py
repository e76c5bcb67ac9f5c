"""Stage 6: every path a destructive tool writes must fall in the selected intent's owned_scope."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.intents import Intent

INSIDE = "any-file"  # a name inside a folder: does the scope own what the folder holds?
SHOWN_PATTERNS = 10  # a refusal names the scope; a scope of 10,000 lines is summed up


def _shown(scope: tuple[str, ...]) -> str:
    if not scope:
        return "nothing (empty owned_scope)"
    more = len(scope) - SHOWN_PATTERNS
    return ", ".join(scope[:SHOWN_PATTERNS]) + (f", and {more} more" if more > 0 else "")


def _folder_itself(intent: Intent, folder: str) -> str:
    """`rm -rf src` under `src/**`: the scope holds what is in the folder, not the folder."""
    return (f"Scope violation: intent {intent.id} ({intent.name}) owns what is inside {folder}/ "
            f"(owned_scope: {_shown(intent.owned_scope)}), but not the folder {folder} itself: "
            f"deleting, moving or replacing the folder is outside the scope, its contents are "
            f"not. Change the files inside {folder}/ by name, or ask the person to add "
            f"{folder} itself to the intent's owned_scope in .orchestration/active_intents.yaml.")


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
            if not intent.owns(path.relative, ctx.config.fold_case):
                if intent.owns(f"{path.relative}/{INSIDE}", ctx.config.fold_case):
                    return Decision.deny(self.name, _folder_itself(intent, path.relative))
                scope = _shown(intent.owned_scope)
                return Decision.deny(self.name, f"Scope violation: intent {intent.id} "
                                                f"({intent.name}) does not own {path.relative} "
                                                f"(owned_scope: {scope}). Request a scope expansion:"
                                                " ask the person to add it to the intent's "
                                                "owned_scope in .orchestration/active_intents.yaml.")
        return None
