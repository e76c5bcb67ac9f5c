"""`intentd run "TASK"`: settings from flags and environment, the gateway, one-line errors."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from intentd.daemon.agents.cli import pipeline_options
from intentd.daemon.utils.workspaces import here

# anthropic takes seconds to import: it is imported when `run` runs, not when the CLI is built
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TOKENS = 8192
DEFAULT_MAX_TURNS = 30


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", help="what the agent should do")
    parser.add_argument("--workspace", type=Path,
                        help="default: the workspace at or above this folder")
    parser.add_argument("--model", default=os.environ.get("INTENTD_MODEL", DEFAULT_MODEL),
                        help=f"env INTENTD_MODEL; default {DEFAULT_MODEL}")
    parser.add_argument("--max-tokens", type=int,
                        default=_env_int("INTENTD_MAX_TOKENS", DEFAULT_MAX_TOKENS),
                        help="per reply; env INTENTD_MAX_TOKENS")
    parser.add_argument("--max-turns", type=int,
                        default=_env_int("INTENTD_MAX_TURNS", DEFAULT_MAX_TURNS),
                        help="env INTENTD_MAX_TURNS")
    parser.add_argument("--max-retries", type=int, default=_env_int("INTENTD_MAX_RETRIES", 2),
                        help="the SDK's retries of failed API requests; env INTENTD_MAX_RETRIES")
    parser.add_argument("--in-process", action="store_true",
                        help="do not use a daemon: approvals are asked on this terminal")
    pipeline_options(parser)


def _fail(message: str, code: int = 1) -> int:
    print(f"intentd run: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from intentd.daemon.agents import api

    problem = api.missing_key()
    if problem:
        return _fail(problem)
    args.workspace = args.workspace or here()
    if not args.workspace.is_dir():
        return _fail(f"workspace {args.workspace} is not a folder", 2)
    if args.max_turns < 1 or args.max_tokens < 1 or args.max_retries < 0:
        return _fail("--max-turns and --max-tokens must be ≥ 1, --max-retries ≥ 0", 2)
    # Here, not at the top: `intentd hook` builds this module's parser on every tool call.
    from intentd.daemon.agents.approver import TerminalApprover
    from intentd.daemon.agents.gateway import GatewayError, open_gateway
    from intentd.daemon.agents.runner import RunSettings
    from intentd.daemon.sandbox.status import sandbox_status

    try:
        gateway = open_gateway(args.workspace, "intentd-run", socket_path=args.socket,
                               approver=TerminalApprover(), in_process=args.in_process,
                               approval_timeout=args.approval_timeout)
    except GatewayError as exc:
        return _fail(str(exc))
    settings = RunSettings(args.task, args.model, args.max_tokens, args.max_turns)
    print(f"intentd run: model {settings.model}; workspace {gateway.workspace}; "
          f"pipeline: {gateway.mode} ({gateway.where}), session {gateway.session_id}", flush=True)
    print(f"intentd run: {sandbox_status().summary}", flush=True)  # unconfined is never silent
    try:
        return _drive(gateway, settings, args)
    finally:
        gateway.close()


def _drive(gateway: Any, settings: Any, args: argparse.Namespace) -> int:
    from intentd.daemon.agents import api
    from intentd.daemon.agents.approval_watch import ApprovalWatcher, announce
    from intentd.daemon.agents.gateway import GatewayError
    from intentd.daemon.agents.runner import AgentRunner

    client = api.make_client(args.max_retries)
    base_url = str(client.base_url)
    watcher, runner = None, None
    try:
        if gateway.mode == "daemon":  # say which approval waits, and where to answer it
            watcher = ApprovalWatcher(args.socket, gateway.session_id, announce(sys.stdout),
                                      approver=False)
        runner = AgentRunner(client, gateway, settings)  # asks the gateway for the intents
        return int(runner.run())
    except api.API_ERRORS as exc:
        return _fail(api.explain(exc, settings.model, base_url, args.max_retries))
    except GatewayError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        used = (f" Tokens used: {runner.usage.input_tokens} in / {runner.usage.output_tokens} "
                "out." if runner is not None else "")
        print("\nintentd run: interrupted (Ctrl-C). Every call either finished and was recorded "
              "or did not start; file writes are atomic, a running command was stopped." + used,
              file=sys.stderr)
        return 130
    finally:
        if watcher is not None:
            watcher.close()
