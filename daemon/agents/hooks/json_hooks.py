"""An Installer for agents whose hooks live in a JSON file as `{"hooks": {EVENT: [entry...]}}`.

Claude Code, Cursor, Gemini CLI and Codex's hooks.json share this shape (entries differ: a
matcher group holding `hooks`, or a flat entry with `command`). intentd's entries are appended
after the user's, and found again by their command line (`intentd hook AGENT ...`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon.agents.hooks.install import (
    Change,
    HookCommand,
    InstallError,
    Scope,
    Wiring,
    command_problem,
    is_intentd_hook,
    read_text,
)
from intentd.daemon.agents.hooks.jsonedit import (
    JsonEditError,
    add_member,
    append_item,
    parse,
    remove_items,
)

Entries = Callable[[HookCommand], dict[str, list[Any]]]
PLACEHOLDER = HookCommand(("intentd",))


class JsonHooksInstaller:
    """Merges intentd's entries into one JSON file per scope, keeping every other byte."""

    def __init__(self, agent: str, path: Callable[[Scope], Path], entries: Entries, *,
                 skeleton: dict[str, Any] | None = None,
                 ours: Callable[[Any], bool] | None = None,
                 validate: Callable[[Any], list[str]] | None = None,
                 comments: bool = False) -> None:
        self.agent, self.path, self.entries = agent, path, entries
        self.comments = comments  # the agent reads JSON with // and /* */ comments
        self.skeleton = skeleton or {}
        self.ours = ours or self.runs_intentd
        self.validate = validate

    def runs_intentd(self, entry: Any) -> bool:
        """A flat entry whose command runs `intentd hook AGENT`, or a group of only such."""
        if not isinstance(entry, dict):
            return False
        if "command" in entry:
            return is_intentd_hook(entry.get("command"), self.agent)
        inner = entry.get("hooks")
        return isinstance(inner, list) and bool(inner) and all(self.runs_intentd(h) for h in inner)

    def install(self, scope: Scope, command: HookCommand) -> list[Change]:
        path, wanted = self.path(scope), self.entries(command)
        text = read_text(path)
        if text is None or not text.strip():
            document = {**self.skeleton, "hooks": wanted}
            return [Change(path, json.dumps(document, indent=2) + "\n")]
        try:
            current = parse(text, self.comments).value
            if self._present(current) == wanted:
                return [Change(path, text)]
            text = remove_items(text, ("hooks",), self.ours, self.comments)
            for key, value in self.skeleton.items():
                if isinstance(current, dict) and key not in current:
                    text = add_member(text, key, value, self.comments)
            for event, items in wanted.items():
                for item in items:
                    text = append_item(text, ("hooks", event), item, self.comments)
        except JsonEditError as exc:
            raise InstallError(f"{path}: {exc}; fix it by hand, then install again") from None
        return [Change(path, text)]

    def uninstall(self, scope: Scope) -> list[Change]:
        path = self.path(scope)
        text = read_text(path)
        if text is None:
            return []
        try:
            left = remove_items(text, ("hooks",), self.ours, self.comments)
            emptied = left != text and parse(left, self.comments).value in ({}, self.skeleton)
        except JsonEditError as exc:
            raise InstallError(f"{path}: {exc}; fix it by hand") from None
        return [Change(path, None if emptied else left)]

    def inspect(self, scope: Scope) -> list[Wiring]:
        path = self.path(scope)
        try:
            text = read_text(path)
        except InstallError as exc:
            return [Wiring(path, False, (str(exc),))]
        if text is None:
            return []
        try:
            document = parse(text, self.comments).value
        except JsonEditError as exc:
            return [Wiring(path, False, (str(exc),))]
        problems = self._shape(document)
        present = self._present(document)
        if present:
            wanted = self.entries(PLACEHOLDER)
            problems += [f"{event}: intentd's hook is missing" for event in wanted
                         if not present.get(event)]
            problems += sorted({problem for entries in present.values() for entry in entries
                                for problem in command_problems(entry)})
        return [Wiring(path, bool(present), tuple(problems))]

    def _present(self, document: Any) -> dict[str, list[Any]]:
        hooks = document.get("hooks") if isinstance(document, dict) else None
        if not isinstance(hooks, dict):
            return {}
        found = {event: [e for e in items if self.ours(e)]
                 for event, items in hooks.items() if isinstance(items, list)}
        return {event: items for event, items in found.items() if items}

    def _shape(self, document: Any) -> list[str]:
        if not isinstance(document, dict):
            return ["the file is not a JSON object"]
        problems = list(self.validate(document)) if self.validate else []
        hooks = document.get("hooks", {})
        if not isinstance(hooks, dict):
            return [*problems, '"hooks" is not an object']
        for event, items in hooks.items():
            if not isinstance(items, list):
                problems.append(f'"hooks.{event}" is not an array')
            elif not all(isinstance(item, dict) for item in items):
                problems.append(f'"hooks.{event}" has an entry that is not an object')
        return problems


def command_problems(entry: Any) -> list[str]:
    """What stops an entry's command from running (its program is not found)."""
    if not isinstance(entry, dict):
        return []
    if "command" in entry:
        problem = command_problem(entry.get("command"))
        return [problem] if problem else []
    inner = entry.get("hooks")
    return [p for hook in inner for p in command_problems(hook)] if isinstance(inner, list) else []
