"""approvals/list, approvals/respond and events/subscribe."""

from __future__ import annotations

from typing import Any

from intentd.daemon import protocol
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.rpc import MethodTable, Params, bad_params


def register(table: MethodTable, core: DaemonCore) -> None:
    async def approvals_list(conn: Any, params: Params) -> dict[str, Any]:
        root = core.workspace(params).root_str if params.raw.get("workspace") else None
        return {"approvals": core.approvals.listing(root)}

    async def approvals_respond(conn: Any, params: Params) -> dict[str, Any]:
        decision = params.text("decision")
        if decision not in (protocol.APPROVE, protocol.REJECT):
            raise bad_params("decision", "must be approve or reject")
        feedback = params.opt_text("feedback")
        core.approvals.respond(params.text("approval_id"), decision == protocol.APPROVE,
                               feedback[:10_000] if feedback else None, conn.client_name)
        return {"resolved": True}

    async def events_subscribe(conn: Any, params: Params) -> dict[str, Any]:
        wanted = params.raw.get("events", list(protocol.NOTIFICATIONS))
        if not isinstance(wanted, list) or any(e not in protocol.NOTIFICATIONS for e in wanted):
            raise bad_params("events", f"must be a list of: {', '.join(protocol.NOTIFICATIONS)}")
        conn.subscriptions = set(wanted)
        core.bus.subscribers.add(conn)
        return {"subscribed": sorted(conn.subscriptions)}

    for name, handler in [(protocol.APPROVALS_LIST, approvals_list),
                          (protocol.APPROVALS_RESPOND, approvals_respond),
                          (protocol.EVENTS_SUBSCRIBE, events_subscribe)]:
        table.register(name, handler)
