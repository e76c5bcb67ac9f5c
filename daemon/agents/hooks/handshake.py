"""What a hook-based agent is told at SessionStart: how to select an intent, and which to pick."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

# engine.intents.INTENTS_FILE, spelled here: importing the engine (yaml, pathspec) would cost
# every hook call ~50 ms (tests/agents/test_hook_imports.py holds the two equal)
INTENTS_FILE = Path(".orchestration") / "active_intents.yaml"
SELECT_COMMAND = "intentd hook select <INTENT_ID>"


def intent_line(intent: dict[str, Any]) -> str:
    scope = ", ".join(str(s) for s in intent.get("owned_scope") or []) or "nothing writable"
    return f"- {intent.get('id')}: {intent.get('name')} (owned_scope: {scope})"


def hook_handshake(intents: Sequence[dict[str, Any]], shell_tool: str) -> str:
    """The handshake for an agent that selects an intent by running a shell command."""
    selectable = [i for i in intents if i.get("selectable", True)]
    listed = "\n".join(intent_line(i) for i in selectable) or (
        "(none is selectable now: ask the person to add an IN_PROGRESS intent)")
    return "\n".join([
        "intentd gates this workspace by intent (.orchestration/active_intents.yaml, edited by "
        "the person). Before you write or edit files or run a command that changes anything, "
        f"select the intent your task serves by running exactly this {shell_tool} command:",
        f"  {SELECT_COMMAND}",
        "Until then such calls are refused. Afterwards, writes must stay in the intent's "
        "owned_scope; for anything outside it, ask the person to widen the scope.",
        "Selectable intents:",
        listed,
    ])
