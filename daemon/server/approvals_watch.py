"""The terminal side of answering: approve or reject one call, several, or the rest of a turn,
with a grant; and `intentd approvals --watch`, an approver in a terminal."""

from __future__ import annotations

import argparse
import json
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.protocol import messages


def answer(client: Client, args: argparse.Namespace, decision: str) -> int:
    params: dict[str, Any] = {"approval_ids": list(args.approval_id), "decision": decision,
                              "rest_of_turn": bool(args.rest_of_turn)}
    if getattr(args, "feedback", None):
        params["feedback"] = args.feedback
    if getattr(args, "grant", None):
        params["grant"] = {"lifetime": args.grant, "shape": args.shape}
        if args.pattern:
            params["grant"]["pattern"] = args.pattern
    result = client.call(protocol.APPROVALS_RESPOND, params)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    verb = "approved" if decision == protocol.APPROVE else "rejected"
    print(f"{verb} {' '.join(result.get('answered') or args.approval_id)}")
    grant = result.get("grant") or {}
    if "queued" in grant:
        print(f"grant {grant['queued']['grant']['description']}: waits for your confirmation in "
              f"the desktop app (Settings)")
    elif "added" in grant:
        print(f"grant {grant['added']['id']}: {grant['added']['description']}")
    return 0


def watch(client: Client, as_json: bool) -> int:
    """Stay connected as an approver: each request is printed with how to answer it, and calls
    wait here rather than going to an agent's own prompt."""
    subscribed = client.call(protocol.EVENTS_SUBSCRIBE, {
        "events": [protocol.APPROVALS_REQUESTED, protocol.APPROVALS_RESOLVED], "approver": True})
    if not subscribed.get("approver"):
        print("intentd: this terminal is not counted as an approver (is it under an agent?)")
    else:
        print(f"watching as an approver ({subscribed.get('approvers')} connected); Ctrl+C stops")
    for approval in client.call(protocol.APPROVALS_LIST)["approvals"]:
        _print_request(approval, as_json)
    while True:
        note = client.next_notification(timeout=3600)
        if note is None:
            continue
        params = note.get("params") or {}
        if note.get("method") == protocol.APPROVALS_REQUESTED:
            _print_request(params, as_json)
        elif as_json:
            print(json.dumps(note), flush=True)
        else:
            resolved = messages.ApprovalResolved.from_json(params)
            print(f"{resolved.approval_id}: {resolved.resolution}", flush=True)


def _print_request(sent: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(sent), flush=True)
        return
    approval = messages.Approval.from_json(sent)
    target = approval.args.get("command") or approval.args.get("path") or ""
    print(f"{approval.id}  {approval.tool}  {str(target)[:120]}\n"
          f"      why: {approval.reason}\n"
          f"      answer: intentd approve {approval.id} "
          f"[--rest-of-turn] [--grant session|workspace]  |  intentd reject {approval.id}",
          flush=True)
