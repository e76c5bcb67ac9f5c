"""The `intentd` command line: one sub-command per module, each registering itself."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from intentd.daemon import __version__

# Each module has `register(subparsers)` that adds its parser and sets `func`.
COMMAND_MODULES = (
    "intentd.daemon.check",
    "intentd.daemon.checkpoints.cli",
    "intentd.daemon.server.cli",
    "intentd.daemon.grants.cli",
    "intentd.daemon.agents.cli",
    "intentd.daemon.setup.cli",
    "intentd.daemon.intents_edit.cli",
    "intentd.daemon.trace.cli",
)
# `intentd hook` runs once per agent tool call, and an agent's prompt waits for it: only its own
# module's parsers are built (the others' imports cost a few hundred milliseconds).
FAST_PATHS = {"hook": ("intentd.daemon.agents.cli",)}


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="intentd", description="Gate an AI coding agent's tool calls by intent.")
    parser.add_argument("--version", action="version", version=f"intentd {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest sub-command parser the arguments chose (`intentd hook select` → select's)."""
    while True:
        action = next((a for a in parser._actions  # noqa: SLF001 - argparse has no public walk
                       if isinstance(a, argparse._SubParsersAction)), None)  # noqa: SLF001
        name = getattr(args, action.dest, None) if action is not None else None
        if action is None or name not in action.choices:
            return parser
        parser = action.choices[name]


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(FAST_PATHS.get(words[0], COMMAND_MODULES) if words else COMMAND_MODULES)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the sub-command's own parser, so its usage is the one printed
        chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
