"""The agent sub-commands `run`, `mcp`, `hook claude-code` / `hook select` and `demo`."""

# Each module is imported only when its command runs: the anthropic and mcp SDKs take seconds
# to import, and `intentd hook` runs once per Claude Code tool call.

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HOOK_TIMEOUT = 60.0           # Claude Code's default hook timeout (see docs/agents.md)
HOOK_APPROVAL_TIMEOUT = 45.0  # under it; the hook's deadline caps it in any case


def _lazy(module: str, name: str = "run") -> Callable[[argparse.Namespace], int]:
    def call(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(f"intentd.daemon.agents.{module}"), name)(args))
    return call


def pipeline_options(parser: argparse.ArgumentParser, timeout: float | None = None) -> None:
    parser.add_argument("--socket", type=Path, help="the daemon's socket (default: the usual one)")
    parser.add_argument("--approval-timeout", type=float, default=timeout, metavar="SECONDS",
                        help="how long a call waits for a person before it is refused")


def register(subparsers: Any) -> None:
    from intentd.daemon.agents import run_command

    run = subparsers.add_parser("run", help="a headless coding agent on the Anthropic API, "
                                            "every tool call through intentd")
    run_command.add_arguments(run)
    run.set_defaults(func=_lazy("run_command"))

    mcp = subparsers.add_parser("mcp", help="the gated tools as an MCP server (stdio)")
    mcp.add_argument("--workspace", type=Path, default=Path.cwd(), help="default: this folder")
    mcp.add_argument("--in-process", action="store_true",
                     help="do not use a daemon (calls that need a person are refused)")
    pipeline_options(mcp)
    mcp.set_defaults(func=_lazy("mcp_server"))

    _register_hook(subparsers)

    demo = subparsers.add_parser("demo", help="a scripted session in a temporary workspace "
                                              "(no API key needed)")
    demo.add_argument("--in-process", action="store_true", help="do not use a running daemon")
    demo.add_argument("--yes", action="store_true",
                      help="with a daemon: the script approves its own calls instead of waiting "
                           "for a person in the desktop app")
    demo.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    pipeline_options(demo, timeout=300.0)
    demo.set_defaults(func=_lazy("demo"))


def _register_hook(subparsers: Any) -> None:
    hook = subparsers.add_parser("hook", help="adapters for agents that run tools themselves")
    kinds = hook.add_subparsers(dest="hook", metavar="KIND", required=True)
    claude = kinds.add_parser("claude-code", help="Claude Code PreToolUse/PostToolUse hook: "
                                                  "reads the hook JSON on stdin")
    claude.add_argument("--workspace", type=Path,
                        help="default: $CLAUDE_PROJECT_DIR, else the hook's cwd")
    pipeline_options(claude, timeout=HOOK_APPROVAL_TIMEOUT)
    claude.add_argument("--hook-timeout", type=float, default=HOOK_TIMEOUT, metavar="SECONDS",
                        help="the hook's timeout in Claude Code's settings (default 60): intentd "
                             "answers a few seconds before it, with deny when it must")
    claude.set_defaults(func=_lazy("claude_hook"))
    select = kinds.add_parser("select", help="select an intent for the Claude Code session "
                                             "(run by the agent through Bash; the hook does it)")
    select.add_argument("intent_id")
    select.add_argument("--workspace", type=Path, default=Path.cwd())
    select.add_argument("--socket", type=Path,
                        help="accepted as every command accepts it: the hook that sees this "
                             "command selects in its own daemon's session")
    select.set_defaults(func=_lazy("claude_select"))
