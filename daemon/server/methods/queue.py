"""approvals/list, approvals/respond (one, several, the rest of a turn, with a grant),
grants/*, and events/subscribe (where a client says it answers approvals)."""

from __future__ import annotations

from typing import Any

from intentd.daemon import protocol
from intentd.daemon.grants.model import Grant, GrantRefused, derive_grant, grantable
from intentd.daemon.grants.requests import GrantRequests
from intentd.daemon.protocol import messages
from intentd.daemon.server.approvals import Approval
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.rpc import MethodError, MethodTable, Params, bad_params
from intentd.daemon.trust.sides import Side

MAX_BATCH = 1000


def register(table: MethodTable, core: DaemonCore) -> None:
    requests = GrantRequests(core.bus.publish, protocol.GRANTS_REQUESTED, protocol.GRANTS_RESOLVED)
    core.trust.grant_requests = requests  # a refused grants/confirm is recorded by its workspace
    grants = core.engine.grants

    async def approvals_list(conn: Any, params: Params) -> dict[str, Any]:
        root = core.workspace(params).root_str if params.raw.get("workspace") else None
        return messages.ApprovalsList(approvals=tuple(core.approvals.listing(root)),
                                      approvers=len(core.approvals.approvers)).to_json()

    async def approvals_respond(conn: Any, params: Params) -> dict[str, Any]:
        decision = params.text("decision")
        if decision not in (protocol.APPROVE, protocol.REJECT):
            raise bad_params("decision", "must be approve or reject")
        feedback = params.opt_text("feedback")
        ids = _chosen_ids(params)
        if params.opt_bool("rest_of_turn", False):
            ids = [i for first in ids for i in core.approvals.rest_of_turn(first)]
        grant = _grant_asked(conn, params, ids, decision)
        answered = core.approvals.respond_many(list(dict.fromkeys(ids)),
                                               decision == protocol.APPROVE,
                                               feedback[:10_000] if feedback else None,
                                               conn.client_name)
        return messages.Responded(resolved=True, answered=tuple(answered),
                                  grant=_keep(conn, grant) if grant is not None else {}).to_json()

    def _chosen_ids(params: Params) -> list[str]:
        raw = params.raw.get("approval_ids")
        if raw is None:
            return [params.text("approval_id")]
        if (not isinstance(raw, list) or not raw or len(raw) > MAX_BATCH
                or not all(isinstance(i, str) for i in raw)):
            raise bad_params("approval_ids", f"must be a list of 1 to {MAX_BATCH} approval ids")
        return list(raw)

    def _grant_asked(conn: Any, params: Params, ids: list[str], decision: str) -> Grant | None:
        """The grant asked for with an approval, derived from the call it approves; checked
        before anything is answered, so a refused grant leaves the call waiting."""
        raw = params.raw.get("grant")
        if raw is None:
            return None
        if not isinstance(raw, dict) or decision != protocol.APPROVE or len(ids) != 1:
            raise bad_params("grant", "a grant comes with approving one call: {\"lifetime\": "
                                      "\"session\"|\"workspace\", \"shape\": \"command\"|\"path\", "
                                      "\"pattern\"?}")
        approval: Approval = core.approvals.get(ids[0])
        origin = {"approval_id": approval.id, "call_id": approval.ev.call_id,
                  "tool": str(approval.ev.ctx.name), "by": conn.client_name,
                  "agent": approval.ev.ctx.session.agent}
        pattern = raw.get("pattern")
        try:
            return derive_grant(approval.ev.ctx, str(raw.get("lifetime")), str(raw.get("shape")),
                                pattern if isinstance(pattern, str) else None, origin)
        except GrantRefused as exc:
            raise bad_params("grant", f"cannot remember this answer: {exc}") from None

    def _keep(conn: Any, grant: Grant) -> dict[str, Any]:
        """From the app a grant holds at once; from any other client it waits for the app."""
        if core.trust.is_app(conn):
            _add(grant)
            return {"added": grant.to_json()}
        by = f"{conn.client_name}: {core.trust.verdict(conn).why}"
        return {"queued": requests.add(grant, by).to_json()}

    def _add(grant: Grant) -> None:
        grants.add(grant)
        core.bus.publish(protocol.GRANTS_CHANGED, {"workspace": grant.workspace,
                                                   "added": grant.to_json()})
        for approval in list(core.approvals.pending.values()):  # calls it covers, waiting now
            ctx = approval.ev.ctx
            if grantable(ctx) is None and grant.fits(ctx):
                core.approvals.respond(approval.id, True, None, f"grant {grant.id}")

    async def grants_list(conn: Any, params: Params) -> dict[str, Any]:
        root = core.workspace(params).root_str if params.raw.get("workspace") else None
        return {"grants": [g.to_json() for g in grants.listing(root)],
                "requests": requests.listing(root)}

    async def grants_revoke(conn: Any, params: Params) -> dict[str, Any]:
        """Narrowing: from any client on the person's side, at once."""
        revoked = grants.revoke(params.text("grant_id"))
        if revoked is None:
            raise bad_params("grant_id", "no such grant (revoked already?)")
        core.bus.publish(protocol.GRANTS_CHANGED, {"workspace": revoked.workspace,
                                                   "revoked": revoked.id})
        return {"revoked": revoked.to_json()}

    async def grants_confirm(conn: Any, params: Params) -> dict[str, Any]:
        """The person's answer, in the app, to a grant asked for elsewhere."""
        decision = params.text("decision")
        if decision not in (protocol.APPROVE, protocol.REJECT):
            raise bad_params("decision", "must be approve or reject")
        if not core.trust.is_app(conn):
            reason = "a grant asked for outside the app is confirmed only in the desktop app"
            core.trust.record_refusal(conn, protocol.GRANTS_CONFIRM, params.raw, reason)
            raise MethodError(protocol.PERSON_ONLY, reason, {"method": protocol.GRANTS_CONFIRM})
        approved = decision == protocol.APPROVE
        request = requests.take(params.text("request_id"), "approved" if approved else "rejected")
        if request is None:
            raise bad_params("request_id", "no such grant request (answered already?)")
        ended = (request.grant.session_id is not None
                 and request.grant.session_id not in core.engine.sessions)
        if approved and ended:
            raise bad_params("request_id", "that grant was for a session that has ended")
        if approved:
            _add(request.grant)
        return {"confirmed": approved, "grant": request.grant.to_json()}

    async def events_subscribe(conn: Any, params: Params) -> dict[str, Any]:
        wanted = params.raw.get("events", list(protocol.NOTIFICATIONS))
        if not isinstance(wanted, list) or any(e not in protocol.NOTIFICATIONS for e in wanted):
            raise bad_params("events", f"must be a list of: {', '.join(protocol.NOTIFICATIONS)}")
        conn.subscriptions = set(wanted)
        core.bus.subscribers.add(conn)
        approver = _is_approver(conn, params)
        core.approvals.set_approver(conn, approver)
        return messages.Subscribed(subscribed=tuple(sorted(conn.subscriptions)), approver=approver,
                                   approvers=len(core.approvals.approvers)).to_json()

    def _is_approver(conn: Any, params: Params) -> bool:
        """Subscribed to approval requests, says it answers them (the app says so by being the
        app), and is on the person's side: an agent cannot hold calls back by posing as one."""
        if protocol.APPROVALS_REQUESTED not in conn.subscriptions:
            return False
        if not (params.opt_bool("approver", False) or core.trust.is_app(conn)):
            return False
        return core.trust.verdict(conn).side is Side.PERSON

    for name, handler in [(protocol.APPROVALS_LIST, approvals_list),
                          (protocol.APPROVALS_RESPOND, approvals_respond),
                          (protocol.GRANTS_LIST, grants_list),
                          (protocol.GRANTS_REVOKE, grants_revoke),
                          (protocol.GRANTS_CONFIRM, grants_confirm),
                          (protocol.EVENTS_SUBSCRIBE, events_subscribe)]:
        table.register(name, handler)
