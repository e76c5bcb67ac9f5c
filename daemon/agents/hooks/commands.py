"""The `intentd hook ...` commands: run an agent's hook, install and uninstall its config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from intentd.daemon.agents.hooks.registry import UnknownAgent, adapter

if TYPE_CHECKING:
    from intentd.daemon.agents.hooks.install import Scope


def run_hook(args: argparse.Namespace) -> int:
    """`intentd hook AGENT [EVENT]`: one hook call, stdin to stdout (see hooks/core.py)."""
    from intentd.daemon.agents.hooks.core import HookOptions, run

    options = HookOptions(socket=args.socket, workspace=args.workspace,
                          approval_timeout=args.approval_timeout,
                          hook_timeout=args.hook_timeout, event=args.event)
    try:
        chosen = adapter(args.hook)
    except Exception as exc:  # no adapter to answer in the agent's terms: exit 2 blocks in most
        print(f"intentd hook {args.hook}: {exc}; the call is refused", file=sys.stderr)
        return 2
    return run(chosen, options)


def scope_of(args: argparse.Namespace) -> Scope:
    """--user, else --workspace (default: this folder), which must exist."""
    from intentd.daemon.agents.hooks.install import InstallError, Scope

    root = None if args.user else (args.workspace or Path.cwd()).resolve()
    if root is not None and not root.is_dir():
        raise InstallError(f"{root} is not a folder")
    return Scope(root, Path.home())


def run_install(args: argparse.Namespace, remove: bool = False) -> int:
    """`intentd hook install|uninstall AGENT`: merge (or take out) intentd's entries."""
    # Imported here: the hook itself (run_hook) never needs them.
    from intentd.daemon.agents.hooks.install import HookCommand, InstallError, apply

    verb = "uninstall" if remove else "install"
    try:
        chosen = adapter(args.agent)
    except UnknownAgent as exc:
        print(f"intentd hook {verb}: {exc}", file=sys.stderr)
        return 2
    installer = chosen.installer()
    if getattr(args, "http", False) or getattr(args, "port", None) is not None:
        if chosen.name != "claude-code":
            print(f"intentd hook {verb}: --http is for claude-code only", file=sys.stderr)
            return 2
        from intentd.daemon.agents.hooks.claude_http_install import installer as http_installer

        installer = http_installer(port=args.port)
    if installer is None:
        print(f"intentd hook {verb}: {chosen.label} has no installer yet; see docs/agents.md",
              file=sys.stderr)
        return 2
    try:
        scope = scope_of(args)
        if remove:
            changes = installer.uninstall(scope)
        else:
            command = HookCommand.detect(args.socket, args.command)
            changes = installer.install(scope, command)
        apply(changes, args.dry_run, sys.stdout)
    except (InstallError, OSError) as exc:
        print(f"intentd hook {verb}: {exc}", file=sys.stderr)
        return 1
    if not changes:
        print(f"{chosen.label}: nothing of intentd's at {scope.describe()}")
    elif not args.dry_run and not remove:
        print(f"{chosen.label} now runs its tool calls through intentd ({scope.describe()})")
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    return run_install(args, remove=True)
