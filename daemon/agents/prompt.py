"""The system prompt, from sections: role, tool rules, workspace, AGENTS.md, intent handshake."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from intentd.daemon.engine.intents import INTENTS_FILE

AGENTS_FILES = ("AGENTS.md",)
MAX_RULES_CHARS = 20_000


@dataclass(frozen=True)
class WorkspaceFacts:
    root: Path
    has_intents_file: bool
    intents: tuple[dict[str, Any], ...] = ()  # protocol Intent shape, with "selectable"
    rules: str | None = None                  # AGENTS.md text


def workspace_facts(root: Path, intents: Sequence[dict[str, Any]]) -> WorkspaceFacts:
    return WorkspaceFacts(root, (root / INTENTS_FILE).is_file(), tuple(intents), read_rules(root))


def read_rules(root: Path) -> str | None:
    for name in AGENTS_FILES:
        try:
            text = (root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if len(text) > MAX_RULES_CHARS:
            text = text[:MAX_RULES_CHARS] + f"\n[... {name} cut at {MAX_RULES_CHARS} characters]"
        return text.strip() or None
    return None


def role_section() -> str:
    return ("You are a careful software engineer working as a coding agent in one workspace. "
            "Every tool call you make goes through intentd, which decides whether it runs, may "
            "ask a person to approve it, keeps a checkpoint before anything that changes files, "
            "and records what happened.")


def tool_rules_section() -> str:
    return "\n".join([
        "# Tool use",
        "- Paths are relative to the workspace root.",
        "- Read a file before you edit it; an edit of a file you have not read (or that changed "
        "since) is refused with `stale file: read it again`.",
        "- Prefer replace_in_file for small changes; old_str must occur exactly once.",
        "- A refused call comes back as a tool error with the reason. Fix the cause it names; do "
        "not repeat the same call (repeated calls are stopped).",
        "- If a person rejects a call, the rest of your calls in that turn are skipped: read "
        "their feedback and change approach.",
        "- Use ask_followup_question only when you cannot go on without the person.",
        "- When the task is done, call attempt_completion with a short summary of what changed.",
    ])


def workspace_section(facts: WorkspaceFacts) -> str:
    return "\n".join([
        "# Workspace",
        f"- Root: {facts.root}",
        f"- System: {platform.system()} {platform.release()}; commands run in bash.",
        f"- Date: {date.today().isoformat()}",
    ])


def rules_section(facts: WorkspaceFacts) -> str | None:
    if not facts.rules:
        return None
    return f"# Rules of this repository (from AGENTS.md)\n\n{facts.rules}"


def handshake_section(facts: WorkspaceFacts) -> str | None:
    """The intent handshake: select an intent before any destructive tool; the ids to pick from."""
    if not facts.has_intents_file:
        return None
    lines = [
        "# Intent handshake (required)",
        "Work in this workspace is scoped by intents listed in "
        ".orchestration/active_intents.yaml, a file only the person edits.",
        "1. Before any tool that changes files or runs a command that is not read-only, call "
        "select_active_intent with the id of the intent your task serves. Until you do, such "
        "tools are refused with \"You must cite a valid active Intent ID.\"",
        "2. The answer is an <intent_context> block: follow its constraints and acceptance "
        "criteria.",
        "3. Writes must stay inside the intent's owned_scope. A write outside it is refused: ask "
        "the person to widen the scope instead of working around it.",
        "4. Reading and listing files never need an intent.",
    ]
    selectable = [i for i in facts.intents if i.get("selectable")]
    if selectable:
        lines.append("Selectable intents:")
        lines.extend(_intent_line(intent) for intent in selectable)
    else:
        lines.append("No intent is selectable right now: you may read, but ask the person to add "
                     "an IN_PROGRESS intent before changing anything.")
    return "\n".join(lines)


def _intent_line(intent: dict[str, Any]) -> str:
    scope = ", ".join(str(s) for s in intent.get("owned_scope") or []) or "nothing writable"
    return f"- {intent.get('id')}: {intent.get('name')} (owned_scope: {scope})"


def build_system_prompt(facts: WorkspaceFacts) -> str:
    sections = [role_section(), tool_rules_section(), workspace_section(facts),
                rules_section(facts), handshake_section(facts)]
    return "\n\n".join(section for section in sections if section)


def claude_code_handshake(intents: Sequence[dict[str, Any]]) -> str:
    """The handshake for Claude Code, whose agent selects an intent through a Bash command."""
    selectable = [i for i in intents if i.get("selectable", True)]
    listed = "\n".join(_intent_line(i) for i in selectable) or (
        "(none is selectable now: ask the person to add an IN_PROGRESS intent)")
    return "\n".join([
        "intentd gates this workspace by intent (.orchestration/active_intents.yaml, edited by "
        "the person). Before you write or edit files or run a command that changes anything, "
        "select the intent your task serves by running exactly this Bash command:",
        "  intentd hook select <INTENT_ID>",
        "Until then such calls are refused. Afterwards, writes must stay in the intent's "
        "owned_scope; for anything outside it, ask the person to widen the scope.",
        "Selectable intents:",
        listed,
    ])
