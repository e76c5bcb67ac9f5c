"""`intentd hook select ID`: what a hook-based agent runs (its shell tool) to select an intent."""

# The hook sees the exact command before it runs and makes the selection in the agent's daemon
# session; the command itself only prints the intent's context for the agent to read.

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from intentd.daemon.engine.intents import INTENTS_FILE, load_intents
from intentd.daemon.tools.meta import intent_context
from intentd.daemon.utils.yamlfile import ConfigError


def find_intents_file(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate: Path = folder / INTENTS_FILE
        if candidate.is_file():
            return candidate
    return None


def run(args: argparse.Namespace) -> int:
    path = find_intents_file(args.workspace.resolve())
    if path is None:
        print(f"intentd hook select: no {INTENTS_FILE} in {args.workspace} or above",
              file=sys.stderr)
        return 1
    try:
        intent = load_intents(path).get(args.intent_id)
    except ConfigError as exc:
        print(f"intentd hook select: {exc}", file=sys.stderr)
        return 1
    if intent is None:
        print(f"intentd hook select: {args.intent_id!r} is not in {path}", file=sys.stderr)
        return 1
    print(intent_context(intent))
    print("The intentd hook selected this intent for your session when it saw this "
          "command; writes are now held to owned_scope.")
    return 0
