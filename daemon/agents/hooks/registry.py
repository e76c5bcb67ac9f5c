"""The agents `intentd hook` knows: a new agent registers here with one line."""

# Each module (in this package) defines ADAPTER, an instance of its Adapter subclass. Modules
# are imported only when their agent is used: a hook call loads one adapter, not five.

from __future__ import annotations

import importlib

from intentd.daemon.agents.hooks.adapter import Adapter

AGENTS: dict[str, str] = {  # CLI name (also the ledger's agent name) -> module
    "claude-code": "claude",
    "cursor": "cursor",
    "codex": "codex",
    "gemini": "gemini",
    "cline": "cline",
}


LABELS: dict[str, str] = {"claude-code": "Claude Code", "cursor": "Cursor",
                          "codex": "Codex CLI", "gemini": "Gemini CLI", "cline": "Cline"}


class UnknownAgent(LookupError):
    """No adapter of that name (or its module is missing in this installation)."""


def adapter(name: str) -> Adapter:
    module_name = AGENTS.get(name)
    if module_name is None:
        raise UnknownAgent(f"no hook adapter for {name!r}; known: {', '.join(AGENTS)}")
    try:
        module = importlib.import_module(f"intentd.daemon.agents.hooks.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"intentd.daemon.agents.hooks.{module_name}":
            raise
        raise UnknownAgent(f"the {name} adapter is not in this installation") from None
    found: Adapter = module.ADAPTER
    return found


def available() -> list[Adapter]:
    """Every registered agent whose adapter is installed, in the table's order."""
    found = []
    for name in AGENTS:
        try:
            found.append(adapter(name))
        except UnknownAgent:
            continue
    return found
