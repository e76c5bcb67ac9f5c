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
import shlex
from pathlib import Path
from typing import Any

from intentd.daemon.agents.hooks.install import HookCommand, Scope, is_intentd_hook
from intentd.daemon.agents.hooks.json_hooks import JsonHooksInstaller

AGENT = "gemini"
GATE_TIMEOUT = 120          # seconds Gemini gives BeforeTool; the hook's deadline matches it
APPROVAL_TIMEOUT = 110      # of those, how long a person has to answer
QUICK_TIMEOUT = 30          # the other events wait for no person
DEFAULT_TIMEOUT_MS = 60_000  # Gemini's, for an entry that names none
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
    """Settings that would keep Gemini from running intentd's hooks, or would let Gemini kill
    the gate before it answers (Gemini then lets the call through)."""
    problems = [*short_timeouts(document)]
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


def short_timeouts(document: dict[str, Any]) -> list[str]:
    """intentd's BeforeTool hooks whose `timeout` (ms) is shorter than the `--hook-timeout`
    (s) of their command: Gemini would kill the hook before its answer, and run the call."""
    hooks = document.get("hooks")
    groups = hooks.get("BeforeTool") if isinstance(hooks, dict) else None
    found: list[str] = []
    for group in groups if isinstance(groups, list) else []:
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if not isinstance(hook, dict) or not is_intentd_hook(hook.get("command"), AGENT):
                continue
            seconds = hook_timeout(str(hook["command"]))
            timeout = hook.get("timeout", DEFAULT_TIMEOUT_MS)
            if seconds is not None and (not isinstance(timeout, (int, float))
                                        or timeout < seconds * 1000):
                found.append(f"BeforeTool: Gemini's timeout ({timeout!r} ms) is shorter than "
                             f"the hook's --hook-timeout {seconds:g} s: a slow answer would "
                             "let the call through; make them equal")
    return found


def hook_timeout(command: str) -> float | None:
    """The `--hook-timeout` of an intentd hook command line, in seconds."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for flag, value in zip(words, words[1:], strict=False):
        if flag == "--hook-timeout":
            try:
                return float(value)
            except ValueError:
                return None
    return None

# Gemini reads settings.json with // and /* */ comments: they are kept as written
INSTALLER = JsonHooksInstaller(AGENT, settings_path, entries, validate=validate, comments=True)
