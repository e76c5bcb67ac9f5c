"""Cline's hooks folder: one small executable file per event, each running `intentd hook cline`.

Cline runs every executable file in a hooks folder that is named after an event, with no
extension on Unix (Cline CLI 3 also runs `PreToolUse.sh`, `PreToolUse.py`, ... and runs all
of them, any `cancel` winning). Workspace: `.clinerules/hooks/`; user: `~/Documents/Cline/Hooks/`
(read by both the CLI and the VS Code extension).

Each file intentd writes carries a marker line; install rewrites only files with that marker,
uninstall removes only those. A file of the same name that is not intentd's is the person's
own hook: install refuses to touch it and says how to keep both (rename theirs with an
extension, which Cline CLI 3 runs beside intentd's).

If intentd itself cannot answer (not installed any more, Python broken), the file prints a
refusal for PreToolUse: Cline reads no answer as "go on".
"""

from __future__ import annotations

import os
from pathlib import Path

from intentd.daemon.agents.hooks.install import (
    Change,
    HookCommand,
    InstallError,
    Scope,
    Wiring,
    read_text,
)

AGENT = "cline"
MARKER = "# intentd-hook: cline"
EXECUTABLE = 0o755
# Of the 120 s Cline CLI 3 gives a tool hook, what a person has to answer; the hook's own
# deadline cuts it to what the host allows (the VS Code extension gives 30 s).
APPROVAL_TIMEOUT = 110
# TaskStart/TaskResume: the handshake (Cline versions that read their context get it there).
# No task-end event: CLI 3 sends SessionShutdown only for an aborted task (every refusal), so
# the session's selected intent would be forgotten on each one; the session keeper idles out.
EVENTS = ("PreToolUse", "PostToolUse", "TaskStart", "TaskResume")
REFUSAL = ('{"cancel": true, "errorMessage": "intentd could not answer (the hook command '
           'failed; see its error above); the call is refused"}')
GO_ON = '{"cancel": false}'
SCRIPT = """#!/bin/sh
{marker} {event} (written by `intentd hook install cline`; `intentd hook uninstall cline` removes it)
# Cline runs this file for each {event} with the event as JSON on stdin; intentd answers on stdout.
answer=$({line}) && [ -n "$answer" ] && {{ printf '%s\\n' "$answer"; exit 0; }}
printf '%s\\n' '{fallback}'
"""


def hooks_folder(scope: Scope) -> Path:
    if scope.root is None:
        return scope.home / "Documents" / "Cline" / "Hooks"
    rules = scope.root / ".clinerules"
    if rules.exists() and not rules.is_dir():
        raise InstallError(f"{rules} is a file (rules of the older single-file kind), so "
                           "Cline's workspace hooks folder cannot be made in it; move those "
                           "rules to .clinerules/rules.md, then install again")
    return rules / "hooks"


def script(command: HookCommand, event: str) -> str:
    extra = ("--approval-timeout", str(APPROVAL_TIMEOUT)) if event == "PreToolUse" else ()
    return SCRIPT.format(marker=MARKER, event=event, line=command.line(AGENT, event, *extra),
                         fallback=REFUSAL if event == "PreToolUse" else GO_ON)


def is_ours(text: str | None) -> bool:
    return text is not None and any(line.startswith(MARKER) for line in text.splitlines()[:3])


class ClineInstaller:
    """A hook file per event in the hooks folder; never one of the person's own files."""

    def install(self, scope: Scope, command: HookCommand) -> list[Change]:
        folder, changes, theirs = hooks_folder(scope), [], []
        for event in EVENTS:
            path = folder / event
            text = _existing(path)
            if text is not None and not is_ours(text):
                theirs.append(path)
            changes.append(Change(path, script(command, event), mode=EXECUTABLE))
        if theirs:
            names = ", ".join(str(path) for path in theirs)
            raise InstallError(
                f"{names}: a hook of your own is already there, and intentd does not overwrite "
                f"it. Keep it by renaming it with an extension (e.g. `{theirs[0].name}.sh`: "
                "Cline CLI 3 runs both, any refusal winning; the VS Code extension runs only "
                "extensionless files), or remove it, then install again.")
        return changes

    def uninstall(self, scope: Scope) -> list[Change]:
        folder = hooks_folder(scope)
        return [Change(folder / event, None) for event in EVENTS
                if is_ours(_existing(folder / event))]

    def inspect(self, scope: Scope) -> list[Wiring]:
        folder, found = hooks_folder(scope), []
        for event in EVENTS:
            path = folder / event
            text = _existing(path)
            if text is None:
                continue
            problems: list[str] = []
            if not is_ours(text):
                problems.append("a hook of the person's own, not intentd's")
            elif not os.access(path, os.X_OK):
                problems.append(f"not executable (Cline skips it): chmod +x {path}")
            found.append(Wiring(path, is_ours(text), tuple(problems)))
        wired = {wiring.path.name for wiring in found if wiring.wired}
        if wired and "PreToolUse" not in wired:
            found.append(Wiring(folder / "PreToolUse", False, ("PreToolUse missing: Cline's "
                                                               "tool calls are not gated",)))
        user = hooks_folder(Scope(None, scope.home)) / "PreToolUse"
        if scope.root is not None and "PreToolUse" in wired and is_ours(_existing(user)):
            # Cline runs the user's and the workspace's hook files both
            found = [Wiring(w.path, w.wired, (*w.problems, f"also installed in {user.parent}: "
                                              "Cline would ask intentd twice about each call; "
                                              "uninstall one of them"))
                     if w.path.name == "PreToolUse" else w for w in found]
        return found


def _existing(path: Path) -> str | None:
    if path.is_dir():
        raise InstallError(f"{path} is a folder, not a hook file")
    return read_text(path)


INSTALLER = ClineInstaller()
