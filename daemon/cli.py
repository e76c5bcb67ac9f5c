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
    "intentd.daemon.agents.cli",
    "intentd.daemon.setup.cli",
    "intentd.daemon.intents_edit.cli",
    "intentd.daemon.trace.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="intentd", description="Gate an AI coding agent's tool calls by intent.")
    parser.add_argument("--version", action="version", version=f"intentd {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
