"""Where Claude Code's hooks go (`.claude/settings.json`) and the entries intentd adds there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from intentd.daemon.agents.hooks.install import HookCommand, Scope
from intentd.daemon.agents.hooks.json_hooks import JsonHooksInstaller

AGENT = "claude-code"
HOOK_TIMEOUT = 60  # seconds; the hook's own deadline (`--hook-timeout`) is set to match


def settings_path(scope: Scope) -> Path:
    return scope.base() / ".claude" / "settings.json"


def command_entries(command: HookCommand) -> dict[str, list[Any]]:
    """One command for every event; PreToolUse blocks when the hook itself fails (Claude Code
    2.1.295 and later: `onFailure`; earlier versions ignore the key)."""
    def hook(event: str, **extra: Any) -> dict[str, Any]:
        # the event word: the input's hook_event_name is then never the only thing that
        # makes a PreToolUse a gate
        return {"type": "command", "command": command.line(AGENT, event), **extra}

    every = {"matcher": "*"}
    return {
        "SessionStart": [{"hooks": [hook("SessionStart")]}],
        "PreToolUse": [{**every, "hooks": [hook("PreToolUse", timeout=HOOK_TIMEOUT,
                                                onFailure="block")]}],
        "PostToolUse": [{**every, "hooks": [hook("PostToolUse")]}],
        "PostToolUseFailure": [{**every, "hooks": [hook("PostToolUseFailure")]}],
        "SessionEnd": [{"hooks": [hook("SessionEnd")]}],
    }


def ours(entry: Any) -> bool:
    """intentd's command hooks and its HTTP hooks alike (either is taken out on uninstall)."""
    from intentd.daemon.agents.hooks import claude_http_install  # it imports this module

    return claude_http_install.ours(entry)


def validate(document: Any) -> list[str]:
    from intentd.daemon.agents.hooks import claude_http_install

    return claude_http_install.validate(document)


INSTALLER = JsonHooksInstaller(AGENT, settings_path, command_entries, ours=ours,
                               validate=validate)
