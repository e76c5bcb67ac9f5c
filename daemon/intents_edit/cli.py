"""`intentd intents list|add|status|scope add|remove`: the person's intents edits from a terminal,
made by the daemon (the file's one writer), so a hand edit made meanwhile is never overwritten."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client, DaemonUnavailable, RpcError

PROG = "intentd intents"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("intents", help="list and edit a workspace's intents",
                                   description=__doc__)
    actions = parser.add_subparsers(dest="intents_action", metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", type=Path, help="default: this folder")
    common.add_argument("--socket", type=Path, help=f"default: {protocol.default_socket_path()}")
    listing = actions.add_parser("list", parents=[common], help="the intents, as the daemon has them")
    listing.add_argument("--json", action="store_true", help="JSON output")
    listing.set_defaults(func=_guard(run_list))
    add = actions.add_parser("add", parents=[common], help="add an intent (it goes last)")
    add.add_argument("intent_id", metavar="ID")
    add.add_argument("--name", required=True)
    add.add_argument("--scope", action="append", default=[], metavar="GLOB",
                     help="an owned_scope line (repeat for more)")
    add.add_argument("--status", default="PENDING", help="default: PENDING")
    add.add_argument("--constraint", action="append", default=[], metavar="TEXT")
    add.add_argument("--accept", action="append", default=[], metavar="TEXT",
                     help="an acceptance criterion")
    add.set_defaults(func=_guard(run_add))
    status = actions.add_parser("status", parents=[common], help="change an intent's status")
    status.add_argument("intent_id", metavar="ID")
    status.add_argument("status", metavar="STATUS", help="e.g. IN_PROGRESS, COMPLETED, ABANDONED")
    status.set_defaults(func=_guard(run_status))
    remove = actions.add_parser("remove", parents=[common], help="remove an intent")
    remove.add_argument("intent_id", metavar="ID")
    remove.set_defaults(func=_guard(run_remove))
    scope = actions.add_parser("scope", help="add a glob to an intent's owned_scope, or remove one")
    verbs = scope.add_subparsers(dest="scope_action", metavar="add|remove")
    for verb in ("add", "remove"):
        sub = verbs.add_parser(verb, parents=[common], help=f"{verb} GLOB")
        sub.add_argument("intent_id", metavar="ID")
        sub.add_argument("globs", nargs="+", metavar="GLOB")
        sub.set_defaults(func=_guard(run_scope))
    scope.set_defaults(func=lambda _args: _usage(scope))
    parser.set_defaults(func=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


Command = Callable[[argparse.Namespace, Client, str], int]


def _guard(fn: Command) -> Callable[[argparse.Namespace], int]:
    """Connect, run, and turn every failure into one line on stderr and exit code 1."""
    def run(args: argparse.Namespace) -> int:
        workspace = str((args.workspace or Path.cwd()).resolve())
        try:
            with Client(args.socket, timeout=60) as client:
                client.initialize("intentd-cli intents")
                return fn(args, client, workspace)
        except RpcError as exc:
            print(f"{PROG}: {exc.message}", file=sys.stderr)
        except DaemonUnavailable as exc:
            print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    return run


def _edit(client: Client, workspace: str, method: str, **params: Any) -> dict[str, Any]:
    """One edit, based on the file as the daemon reads it now."""
    base = client.call(protocol.INTENTS_READ, {"workspace": workspace})["sha256"]
    answer: dict[str, Any] = client.call(method, {"workspace": workspace, "base_sha256": base,
                                                  **params})
    return answer


def run_list(args: argparse.Namespace, client: Client, workspace: str) -> int:
    answer = client.call(protocol.INTENTS_LIST, {"workspace": workspace})
    if args.json:
        print(json.dumps(answer, indent=2))
        return 0
    error = answer.get("error")
    if error:
        print(f"the intents file is broken, these are the last good intents: "
              f"{error['file']}:{error['line']}: {error['message']}", file=sys.stderr)
    intents = answer.get("intents") or []
    if not intents:
        print("no intents")
        return 0
    width = max(len(i["id"]) for i in intents)
    for intent in intents:
        mark = "" if intent.get("selectable") else "  (not selectable)"
        print(f"{intent['id']:<{width}}  {intent['status']:<12} {intent['name']}{mark}")
        print(f"{'':<{width}}  scope: {', '.join(intent['owned_scope']) or '(empty)'}")
    return 0


def run_add(args: argparse.Namespace, client: Client, workspace: str) -> int:
    answer = _edit(client, workspace, protocol.INTENTS_CREATE, intent={
        "id": args.intent_id, "name": args.name, "status": args.status, "owned_scope": args.scope,
        "constraints": args.constraint, "acceptance_criteria": args.accept})
    print(f"added {args.intent_id} to {answer['file']}")
    return 0


def run_status(args: argparse.Namespace, client: Client, workspace: str) -> int:
    answer = _edit(client, workspace, protocol.INTENTS_UPDATE_STATUS,
                   intent_id=args.intent_id, status=args.status)
    print(f"{args.intent_id} is {args.status}" + ("" if answer["changed"] else " (it was already)"))
    return 0


def run_remove(args: argparse.Namespace, client: Client, workspace: str) -> int:
    answer = _edit(client, workspace, protocol.INTENTS_REMOVE, intent_id=args.intent_id)
    print(f"removed {args.intent_id} from {answer['file']}")
    return 0


def run_scope(args: argparse.Namespace, client: Client, workspace: str) -> int:
    method = protocol.INTENTS_SCOPE_ADD if args.scope_action == "add" else protocol.INTENTS_SCOPE_REMOVE
    answer = _edit(client, workspace, method, intent_id=args.intent_id, globs=args.globs)
    scope: list[str] = next((i["owned_scope"] for i in answer["intents"] if i["id"] == args.intent_id), [])
    note = "" if answer["changed"] else " (no change: already there)"
    print(f"{args.intent_id} owned_scope: {', '.join(scope) or '(empty)'}{note}")
    return 0
