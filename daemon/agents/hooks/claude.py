"""Claude Code's command hooks: its payload, its tool names and its hookSpecificOutput answers."""

# Claude Code reads a decision only from exit 0 with JSON on stdout, so every answer is that:
# permissionDecision allow / deny / ask ("ask" is Claude Code's own permission prompt).

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    EventKind,
    HookEvent,
    HookInputError,
    Mapped,
    Reply,
    derived_call_key,
    text_field,
)
from intentd.daemon.agents.hooks.claude_tools import map_call

if TYPE_CHECKING:
    from intentd.daemon.agents.hooks.install import Installer

EVENTS: dict[str, EventKind] = {
    "PreToolUse": "pre_tool", "PostToolUse": "post_tool", "PostToolUseFailure": "post_tool",
    "SessionStart": "session_start", "SessionEnd": "session_end"}


class ClaudeCodeAdapter(Adapter):
    name = "claude-code"
    label = "Claude Code"
    hook_timeout = 60.0
    project_dir_env = ("CLAUDE_PROJECT_DIR",)
    select_hint = ("In Claude Code, select an intent by running the Bash command "
                   "`intentd hook select <INTENT_ID>`.")
    shell_tool = "Bash"

    def installer(self) -> Installer:
        from intentd.daemon.agents.hooks.claude_install import INSTALLER

        return INSTALLER

    def event(self, hook_event: str | None, payload: Any) -> HookEvent:
        if not isinstance(payload, dict):
            raise HookInputError("the hook input is not a JSON object")
        # the event the command was installed for wins (older settings name none)
        name = str(hook_event or payload.get("hook_event_name") or "")
        kind = EVENTS.get(name, "other")
        failed = name == "PostToolUseFailure"
        response = payload.get("tool_response", payload.get("error"))
        return HookEvent(
            kind=kind, name=name, session_key=str(payload.get("session_id") or ""),
            cwd=text_field(payload, "cwd"), tool_name=str(payload.get("tool_name") or ""),
            tool_input=payload.get("tool_input"), call_key=str(payload.get("tool_use_id") or ""),
            ok=not failed and succeeded(response), output=as_text(response), payload=payload)

    def map_tool(self, tool_name: str, tool_input: Any, cwd: str | None) -> Mapped:
        return map_call(tool_name, tool_input, cwd)

    def native_prompt(self, event: HookEvent) -> bool:
        return True

    def turn(self, event: HookEvent) -> str | None:
        return text_field(event.payload, "prompt_id")  # one per prompt (Claude Code 2.1)

    def allow(self, event: HookEvent, reason: str, context: str | None = None) -> Reply:
        return Reply.json(decision("allow", reason, context))

    def deny(self, event: HookEvent | None, reason: str) -> Reply:
        return Reply.json(decision("deny", reason))

    def ask(self, event: HookEvent, reason: str) -> Reply:
        return Reply.json(decision("ask", reason))

    def context(self, event: HookEvent, text: str) -> Reply:
        name = "SessionStart" if event.kind == "session_start" else "PostToolUse"
        return Reply.json({"hookSpecificOutput": {"hookEventName": name,
                                                  "additionalContext": text}})


def decision(verdict: str, reason: str, context: str | None = None) -> dict[str, Any]:
    """PreToolUse's answer object (the command hook prints it; an HTTP hook returns it)."""
    output: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": verdict,
                              "permissionDecisionReason": reason}
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def call_key(payload: dict[str, Any]) -> str:
    """Pairs a PostToolUse with its PreToolUse: the tool_use_id, else the call itself."""
    if payload.get("tool_use_id"):
        return str(payload["tool_use_id"])
    return derived_call_key(payload.get("tool_name"), payload.get("tool_input"))


def succeeded(response: Any) -> bool:
    if isinstance(response, dict):
        return not (response.get("success") is False or response.get("is_error")
                    or response.get("interrupted"))
    return True


def as_text(response: Any) -> str:
    return response if isinstance(response, str) else json.dumps(response, default=str)


ADAPTER = ClaudeCodeAdapter()
