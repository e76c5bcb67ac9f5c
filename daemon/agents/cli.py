"""The agent sub-commands `run`, `mcp`, `hook AGENT` / `hook install` / `hook select`, `demo`."""

# Each module is imported only when its command runs: the anthropic and mcp SDKs take seconds
# to import, and `intentd hook AGENT` runs once per agent tool call.

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HOOK_APPROVAL_TIMEOUT = 45.0  # the hook's deadline (under the agent's timeout) caps it anyway


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
    mcp.add_argument("--workspace", type=Path,
                     help="default: the workspace at or above this folder")
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
    from intentd.daemon.agents.hooks.registry import AGENTS, LABELS

    hook = subparsers.add_parser("hook", help="adapters for agents that run tools themselves")
    kinds = hook.add_subparsers(dest="hook", metavar="AGENT|install|uninstall|token|select",
                                required=True)
    for name in AGENTS:
        agent = kinds.add_parser(name, help=f"{LABELS.get(name, name)}'s hooks call this: the "
                                            "hook's JSON on stdin, the answer on stdout")
        agent.add_argument("event", nargs="?", metavar="EVENT",
                           help="the hook event, when the agent's input does not name it")
        agent.add_argument("--workspace", type=Path,
                           help="default: the agent's project folder, else the hook's cwd")
        pipeline_options(agent, timeout=HOOK_APPROVAL_TIMEOUT)
        agent.add_argument("--hook-timeout", type=float, metavar="SECONDS",
                           help="the hook's timeout in the agent's settings (default: the "
                                "agent's own default): intentd answers a few seconds before it, "
                                "with deny when it must")
        agent.set_defaults(func=_lazy("hooks.commands", "run_hook"))
    for verb in ("install", "uninstall"):
        setup = kinds.add_parser(verb, help=f"{verb} intentd's hooks in an agent's settings, "
                                            "keeping every other hook")
        setup.add_argument("agent", metavar="AGENT", help=", ".join(AGENTS))
        where = setup.add_mutually_exclusive_group()
        where.add_argument("--workspace", type=Path, help="this workspace's settings (default: "
                                                          "the current folder)")
        where.add_argument("--user", action="store_true", help="the user's own settings")
        setup.add_argument("--dry-run", action="store_true",
                           help="print the resulting files without writing them")
        if verb == "install":
            setup.add_argument("--socket", type=Path,
                               help="the daemon's socket, written into the hook command")
            setup.add_argument("--command", help="how the agent runs intentd (default: "
                                                 "`intentd`, or this Python's `-m` form)")
            setup.add_argument("--http", action="store_true",
                               help="claude-code: the daemon's HTTP hook (Claude Code 2.1.295 "
                                    "or later) instead of a process per tool call")
            setup.add_argument("--port", type=int, help="with --http: the daemon's HTTP hook "
                                                        "port (default: the one it serves on)")
        setup.set_defaults(func=_lazy("hooks.commands", f"run_{verb}"))
    token = kinds.add_parser("token", help="print the secret token of the daemon's HTTP hook "
                                           "(for INTENTD_HOOK_TOKEN)")
    token.set_defaults(func=_lazy("hooks.claude_http_token", "run_token"))
    select = kinds.add_parser("select", help="select an intent for the agent's session "
                                             "(run by the agent as a shell command; its hook "
                                             "does it)")
    select.add_argument("intent_id")
    select.add_argument("--workspace", type=Path, default=Path.cwd())
    select.add_argument("--socket", type=Path,
                        help="accepted as every command accepts it: the hook that sees this "
                             "command selects in its own daemon's session")
    select.set_defaults(func=_lazy("hooks.select"))
