"""`intentd serve`, and the terminal side of approvals: `status`, `approvals`, `approve`, `reject`."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client, DaemonUnavailable, RpcError


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser("serve", help="run the daemon on the local socket")
    serve.add_argument("--socket", type=Path, help=f"default: {protocol.default_socket_path()}")
    serve.add_argument("--log-level", default="WARNING")
    serve.set_defaults(func=run_serve)
    for name, func, help_text in [
        ("status", run_status, "workspaces, sessions and pending approvals"),
        ("approvals", run_approvals, "list the calls waiting for a person"),
        ("approve", run_approve, "approve a waiting call"),
        ("reject", run_reject, "reject a waiting call, with feedback for the agent"),
    ]:
        parser = subparsers.add_parser(name, help=help_text)
        parser.add_argument("--socket", type=Path)
        parser.add_argument("--json", action="store_true")
        if name in ("approve", "reject"):
            answer_options(parser, name)
        if name == "reject":
            parser.add_argument("--feedback", default=None)
        if name == "approvals":
            parser.add_argument("--watch", action="store_true",
                                help="stay connected as an approver and print each request")
        parser.set_defaults(func=func)


def answer_options(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("approval_id", nargs="+", help="one or more waiting calls")
    parser.add_argument("--rest-of-turn", action="store_true",
                        help=f"{name} every waiting call of the same agent turn too")
    if name == "approve":
        parser.add_argument("--grant", choices=("session", "workspace"),
                            help="and do not ask again: for this session, or for this workspace "
                                 "until revoked (confirmed in the app)")
        parser.add_argument("--shape", choices=("command", "path"), default="command",
                            help="a command prefix (default), or the tool on a path pattern")
        parser.add_argument("--pattern", help="with --shape path: the paths it covers")


def run_serve(args: argparse.Namespace) -> int:
    from intentd.daemon.engine.engine import Engine
    from intentd.daemon.server.server import StartupError, raise_descriptor_limit

    logging.basicConfig(level=args.log_level.upper(), format="intentd: %(levelname)s %(message)s")
    raise_descriptor_limit()
    path = args.socket or protocol.default_socket_path()
    engine = Engine(watch=True)
    try:
        asyncio.run(_serve_announced(path, engine))
    except StartupError as exc:
        engine.close()
        print(f"intentd serve: {exc}", file=sys.stderr)
        return 1
    return 0


async def _serve_announced(path: Path, engine: Any) -> None:
    """Serve, saying once where, when the socket answers: the one line a person looks for."""
    from intentd.daemon.server.server import IntentdServer

    server = IntentdServer(path, engine)
    await server.start()
    print(f"intentd serve: listening on {path}", flush=True)
    await server.serve_until_stopped()


def _guard(fn: Callable[[argparse.Namespace, Client], int]) -> Callable[[argparse.Namespace], int]:
    """Connect, run, and turn a missing daemon or an error answer into one clear line."""
    def wrapper(args: argparse.Namespace) -> int:
        try:
            with Client(args.socket) as client:
                return fn(args, client)
        except DaemonUnavailable as exc:
            print(f"intentd: {exc}", file=sys.stderr)
            return 1
        except RpcError as exc:
            print(f"intentd: {exc.message}", file=sys.stderr)
            return 1
    return wrapper


@_guard
def run_status(args: argparse.Namespace, client: Client) -> int:
    pending = client.call(protocol.APPROVALS_LIST)
    status = {"workspaces": client.call(protocol.WORKSPACES_LIST)["workspaces"],
              "sessions": client.call(protocol.SESSIONS_LIST)["sessions"],
              "approvals": pending["approvals"], "approvers": pending.get("approvers", 0)}
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    print(f"daemon at {client.socket_path}")
    _print_approvers(status["approvers"])
    _print_workspaces(status["workspaces"], status["sessions"])
    _print_approvals(status["approvals"])
    return 0


def _print_workspaces(workspaces: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> None:
    """Each workspace whose folder still exists, named apart from its namesakes, with its own
    sessions under it."""
    shown = [ws for ws in workspaces if Path(ws["workspace"]).is_dir()]
    labels = protocol.workspace_labels([ws["workspace"] for ws in shown])
    if not shown:
        print("no workspaces: no agent has opened a session yet")
    for ws in shown:
        root = ws["workspace"]
        print(f"- {labels[root]}  {root}: {ws['sessions']} session(s), {ws['pending']} pending")
        for error in ws["errors"]:
            print(f"    error: {error['file']}:{error['line']}: {error['message']}")
        for s in sessions:
            if s["workspace"] == root:
                print(f"    session {s['session_id']} ({s['agent']}, {s['mode']}) "
                      f"intent={s['intent_id']}")


@_guard
def run_approvals(args: argparse.Namespace, client: Client) -> int:
    if args.watch:
        from intentd.daemon.server.approvals_watch import watch
        return watch(client, args.json)
    pending = client.call(protocol.APPROVALS_LIST)
    if args.json:
        print(json.dumps(pending["approvals"], indent=2))
    else:  # whether what waits here waits for a person, or goes to the agent's own prompt
        _print_approvers(pending.get("approvers", 0))
        _print_approvals(pending["approvals"])
    return 0


def _print_approvers(count: int) -> None:
    print(f"approvers connected: {count}" + ("" if count else
          " (calls needing a person go to the agent's own prompt where it has one)"))


def _print_approvals(approvals: list[dict[str, Any]]) -> None:
    if not approvals:
        print("no calls are waiting for a person")
    for a in approvals:
        print(f"{a['id']}  {a['tool']}  {json.dumps(a['args'])[:100]}\n"
              f"      workspace {a['workspace']}  session {a['session_id']}  intent {a['intent_id']}\n"
              f"      why: {a['reason']}")
        if a.get("diff"):
            print("      " + "\n      ".join(a["diff"].splitlines()[:40]))


@_guard
def run_approve(args: argparse.Namespace, client: Client) -> int:
    from intentd.daemon.server.approvals_watch import answer
    return answer(client, args, protocol.APPROVE)


@_guard
def run_reject(args: argparse.Namespace, client: Client) -> int:
    from intentd.daemon.server.approvals_watch import answer
    return answer(client, args, protocol.REJECT)
