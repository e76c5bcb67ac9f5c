"""`intentd grants`: list grants with where each came from, revoke one, print it as a policy rule."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client, DaemonUnavailable, RpcError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("grants", help="what runs without asking you, because you said "
                                                  "so once; revoke or copy as a policy rule")
    parser.add_argument("--socket", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--workspace", help="only this workspace's grants")
    actions = parser.add_mutually_exclusive_group()
    actions.add_argument("--revoke", metavar="GRANT_ID", help="revoke a grant, at once")
    actions.add_argument("--policy-rule", metavar="GRANT_ID",
                         help="print a grant as policy.yaml text, to keep it under version control")
    parser.set_defaults(func=run_grants)


def run_grants(args: argparse.Namespace) -> int:
    try:
        with Client(args.socket) as client:
            client.initialize("intentd-cli")
            if args.revoke:
                revoked = client.call(protocol.GRANTS_REVOKE, {"grant_id": args.revoke})["revoked"]
                print(f"revoked {revoked['id']}: {revoked['description']}")
                return 0
            params = {"workspace": str(Path(args.workspace).resolve())} if args.workspace else {}
            listing = client.call(protocol.GRANTS_LIST, params)
    except (DaemonUnavailable, RpcError) as exc:
        print(f"intentd: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 1
    if args.policy_rule:
        return _print_rule(listing["grants"], args.policy_rule)
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    _print_listing(listing)
    return 0


def _print_rule(grants: list[dict[str, Any]], grant_id: str) -> int:
    grant = next((g for g in grants if g["id"] == grant_id), None)
    if grant is None:
        print(f"intentd: no grant {grant_id}", file=sys.stderr)
        return 1
    if not grant.get("policy_rule"):
        print(f"intentd: {grant_id} ({grant['description']}) has no policy rule of the same "
              "shape; policy.yaml allows commands, not a tool on a path", file=sys.stderr)
        return 1
    print(f"# {grant['description']} — add under .orchestration/policy.yaml")
    print(grant["policy_rule"], end="")
    return 0


def _print_listing(listing: dict[str, Any]) -> None:
    grants, requests = listing.get("grants") or [], listing.get("requests") or []
    if not grants:
        print("no grants: every call that needs a person asks")
    for grant in grants:
        origin = grant.get("origin") or {}
        print(f"{grant['id']}  {grant['description']}\n"
              f"      workspace {grant['workspace']}\n"
              f"      from approving {origin.get('tool')} ({origin.get('approval_id')}) of "
              f"{origin.get('agent')}, answered in {origin.get('by')}")
    for request in requests:
        print(f"waiting for confirmation in the app: {request['grant']['description']} "
              f"(asked by {request['requested_by']})")
