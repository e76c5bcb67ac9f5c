"""Where Cursor's hooks go (`.cursor/hooks.json`, version 1) and the entries intentd adds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from intentd.daemon.agents.hooks.install import HookCommand, Scope
from intentd.daemon.agents.hooks.json_hooks import JsonHooksInstaller

AGENT = "cursor"
TIMEOUT = 60  # seconds; the hook answers a few seconds before it
GATES = ("preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile")
REPORTS = ("postToolUse", "postToolUseFailure", "afterShellExecution", "afterMCPExecution",
           "afterFileEdit")


def hooks_path(scope: Scope) -> Path:
    """Project hooks in `<root>/.cursor/hooks.json` (trusted workspaces only), user hooks in
    `~/.cursor/hooks.json`."""
    return scope.base() / ".cursor" / "hooks.json"


def entries(command: HookCommand) -> dict[str, list[Any]]:
    """Gates block when the hook fails (`failClosed`); reports and the handshake do not. Each
    command names its event, so a gate stays a gate even if an input ever lacked the name."""
    wired: dict[str, list[Any]] = {}
    for event in ("sessionStart", *GATES, *REPORTS, "sessionEnd"):
        entry: dict[str, Any] = {"command": command.line(AGENT, event), "timeout": TIMEOUT}
        if event in GATES:
            entry["failClosed"] = True
        wired[event] = [entry]
    return wired


def validate(document: dict[str, Any]) -> list[str]:
    version = document.get("version")
    return [] if version == 1 else [f'"version" is {version!r}; Cursor reads version 1']


INSTALLER = JsonHooksInstaller(AGENT, hooks_path, entries, skeleton={"version": 1},
                               validate=validate)
