"""The gate on person methods: refused, with a ledger entry, unless the caller is the person's."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import socket
import time
from datetime import UTC, datetime
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.ledger import summarize_args
from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.grants.model import Grant
from intentd.daemon.server.rpc import MethodError
from intentd.daemon.trust.procs import Proc, read_proc
from intentd.daemon.trust.sides import AgentProcesses, Side, Verdict, classify, markable

log = logging.getLogger(__name__)
APP_CLIENT = "intentd-gui"  # the desktop app's `initialize` client name starts with this
_refusals = itertools.count(1)


class TrustGate:
    """Knows the daemon's own process and the processes agent sessions were opened from."""

    def __init__(self, engine: Engine, events: Any = None) -> None:
        self.engine = engine
        self.events = events  # publish(name, params), for the app to show refusals live
        me = read_proc(os.getpid())
        self.daemon_key = me.key if me else (os.getpid(), -1)
        self.agents = AgentProcesses()
        self.approvals: Any = None  # the ApprovalQueue, to find an approval's workspace
        self.grant_requests: Any = None  # the GrantRequests, to find a grant request's workspace

    def verdict(self, conn: Any) -> Verdict:
        return self.verdict_of(getattr(conn, "chain", None))

    def verdict_of(self, chain: list[Proc] | None) -> Verdict:
        """The side of a caller with this ancestry (None: unknown)."""
        return classify(chain, self.daemon_key, self.agents)

    def is_app(self, conn: Any) -> bool:
        """The desktop app, on the person's side: the one client that applies widening at once."""
        return (str(getattr(conn, "client_name", "")).startswith(APP_CLIENT)
                and self.verdict(conn).side is Side.PERSON)

    def check(self, conn: Any, method: str, params: Any) -> None:
        """Raise PERSON_ONLY (after recording it) when a person method comes from elsewhere."""
        if not protocol.is_person_method(method):
            return
        verdict = self.verdict(conn)
        if verdict.side is Side.PERSON:
            return
        reason = (f"{method} is for the person only (the desktop app, or the intentd CLI in the "
                  f"person's own terminal), and this caller is on an agent's side: {verdict.why}"
                  if verdict.side is Side.AGENT else
                  f"{method} is for the person only, and the daemon cannot tell who is calling "
                  f"({verdict.why}); refused to be safe")
        self.record_refusal(conn, method, params if isinstance(params, dict) else {}, reason)
        raise MethodError(protocol.PERSON_ONLY, reason,
                       {"method": method, "side": verdict.side.value})

    def record_agent(self, conn: Any, claim: Any, label: str) -> str | None:
        """Record the agent process a client names (`{"pid", "start"}`); why not, or None."""
        if not isinstance(claim, dict) or not all(
                isinstance(claim.get(k), int) and not isinstance(claim.get(k), bool)
                for k in ("pid", "start")):
            return "agent_process must be {\"pid\": N, \"start\": N}"
        proc = read_proc(claim["pid"])
        if proc is None or proc.start != claim["start"]:
            return f"process {claim['pid']} with that start time is gone"
        chain: list[Proc] = getattr(conn, "chain", None) or []
        why_not: str | None = markable(proc, chain, self.daemon_key)
        if why_not is None:
            self.agents.add(proc, label)
        return why_not

    def record_refusal(self, conn: Any, method: str, params: dict[str, Any], reason: str) -> None:
        workspace = self._workspace_of(params)
        entry = refusal_entry(method, params, reason, workspace, conn)
        if workspace is None:
            log.warning("refused %s: %s", method, reason)
            return
        try:
            self.engine.ledger(workspace).append(entry)
        except OSError:
            log.exception("could not record the refusal of %s", method)
        if self.events is not None:
            self.events(protocol.TOOLS_FINISHED, entry)

    def _workspace_of(self, params: dict[str, Any]) -> Workspace | None:
        """Only a workspace the daemon knows already: a refused caller never makes it load one."""
        sessions = self.engine.sessions
        session = sessions.get(params["session_id"]) if isinstance(params.get("session_id"),
                                                                   str) else None
        if session is not None:
            return session.workspace
        approval = (self.approvals.pending.get(params["approval_id"])
                    if self.approvals is not None and isinstance(params.get("approval_id"), str)
                    else None)
        if approval is not None:
            found: Workspace = approval.ev.ctx.session.workspace
            return found
        grant = self._grant_of(params)
        if grant is not None:
            return self.engine.workspaces.get(grant.workspace)
        raw = params.get("workspace")
        if isinstance(raw, str) and raw:
            try:
                return self.engine.workspaces.get(os.path.realpath(os.path.expanduser(raw)))
            except (OSError, ValueError):
                return None
        return None

    def _grant_of(self, params: dict[str, Any]) -> Grant | None:
        """The grant a grants/confirm or grants/revoke names (they carry no workspace)."""
        request_id, grant_id = params.get("request_id"), params.get("grant_id")
        if isinstance(request_id, str) and self.grant_requests is not None:
            request = self.grant_requests.pending.get(request_id)
            if request is not None:
                found: Grant = request.grant
                return found
        if isinstance(grant_id, str):
            return next((g for g in self.engine.grants.listing() if g.id == grant_id), None)
        return None


def refusal_entry(method: str, params: dict[str, Any], reason: str,
                  workspace: Workspace | None, conn: Any) -> dict[str, Any]:
    """A ledger entry in the shape of a call's (docs/protocol.md), the method as its tool."""
    now = datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="milliseconds")
    chain = getattr(conn, "chain", None) or []
    args_text = json.dumps(params, sort_keys=True, default=repr)
    return {
        "v": 1,
        "intent": {"id": f"r-{next(_refusals)}", "time": now,
                   "session": params.get("session_id") if isinstance(params.get("session_id"),
                                                                     str) else None,
                   "agent": str(getattr(conn, "client_name", "client"))[:100], "mode": None,
                   "workspace": workspace.root_str if workspace else None, "intent_id": None,
                   "tool": method, "args": summarize_args(params),
                   "args_sha256": hashlib.sha256(args_text.encode()).hexdigest()},
        "decision": "deny", "stage": "trust", "reason": reason, "approved_by": None,
        "receipt": {"result": "not_run", "output_sha256": None,
                    "data": {"caller": [p.describe() for p in chain[:8]]},
                    "files_before": {}, "files_after": {}, "checkpoint_id": None,
                    "timing": {"started_at": now, "decided_ms": 0.0, "execution_ms": 0.0},
                    "host": socket.gethostname()},
    }
