"""Where Gemini CLI's hooks go (`settings.json` `hooks`) and the entries intentd adds.

Project hooks live in `<root>/.gemini/settings.json`, user hooks in `~/.gemini/settings.json`
(`$GEMINI_CLI_HOME/.gemini` when that is set). Gemini concatenates the `hooks` of every layer,
so intentd's entries sit beside the user's own; comments in the file are kept. Timeouts are in
milliseconds. A hook that cannot start, crashes or exits with anything but 0 and 2 lets the
call through in Gemini, so the BeforeTool command turns any such failure into exit 2 with a
reason (a shell guard).

Gemini runs no hooks at all with `hooksConfig.enabled: false`, skips a hook whose name is in
`hooksConfig.disabled`, and in a folder it does not trust ignores every settings file's hooks:
`intentd doctor` reports the first two.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from intentd.daemon.agents.hooks.install import HookCommand, Scope
from intentd.daemon.agents.hooks.json_hooks import JsonHooksInstaller

AGENT = "gemini"
GATE_TIMEOUT = 120          # seconds Gemini gives BeforeTool; the hook's deadline matches it
APPROVAL_TIMEOUT = 110      # of those, how long a person has to answer
QUICK_TIMEOUT = 30          # the other events wait for no person
GUARD = ' || { echo "intentd: the hook could not run; the call is refused" >&2; exit 2; }'
NAMES = {"SessionStart": "intentd-handshake", "BeforeTool": "intentd-gate",
         "AfterTool": "intentd-report", "SessionEnd": "intentd-session-end"}


def gemini_home(scope: Scope) -> Path:
    """The user's Gemini folder: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`."""
    configured = os.environ.get("GEMINI_CLI_HOME")
    return (Path(configured) if configured else scope.home) / ".gemini"


def settings_path(scope: Scope) -> Path:
    if scope.root is not None:
        return scope.root / ".gemini" / "settings.json"
    return gemini_home(scope) / "settings.json"


def entries(command: HookCommand) -> dict[str, list[Any]]:
    def hook(event: str, seconds: int, guarded: bool) -> dict[str, Any]:
        extra = ["--hook-timeout", str(seconds)]
        if event == "BeforeTool":  # a person gets nearly all of the hook's time to answer
            extra += ["--approval-timeout", str(APPROVAL_TIMEOUT)]
        line = command.line(AGENT, event, *extra)
        return {"name": NAMES[event], "type": "command",
                "command": line + (GUARD if guarded else ""), "timeout": seconds * 1000}

    return {
        "SessionStart": [{"matcher": "*", "hooks": [hook("SessionStart", QUICK_TIMEOUT, False)]}],
        "BeforeTool": [{"matcher": "*", "hooks": [hook("BeforeTool", GATE_TIMEOUT, True)]}],
        "AfterTool": [{"matcher": "*", "hooks": [hook("AfterTool", QUICK_TIMEOUT, False)]}],
        "SessionEnd": [{"matcher": "*", "hooks": [hook("SessionEnd", QUICK_TIMEOUT, False)]}],
    }


def validate(document: dict[str, Any]) -> list[str]:
    """Settings that would keep Gemini from running intentd's hooks."""
    problems: list[str] = []
    config = document.get("hooksConfig")
    if not isinstance(config, dict):
        return problems
    if config.get("enabled") is False:
        problems.append('"hooksConfig.enabled" is false: Gemini CLI runs no hooks at all')
    disabled = config.get("disabled")
    if isinstance(disabled, list):
        off = sorted(name for name in NAMES.values() if name in disabled)
        if off:
            problems.append(f'"hooksConfig.disabled" turns off {", ".join(off)}')
    return problems


# Gemini reads settings.json with // and /* */ comments: they are kept as written
INSTALLER = JsonHooksInstaller(AGENT, settings_path, entries, validate=validate, comments=True)
