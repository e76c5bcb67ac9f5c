"""checkpoints/*, settings/* and ledger/query: a workspace's stored data."""

from __future__ import annotations

import json
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.ledger_index import BadQuery, LedgerQuery, ledger_index
from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.protocol import messages as m
from intentd.daemon.server import wire
from intentd.daemon.server.core import DaemonCore, clean_overrides, overrides_path
from intentd.daemon.server.rpc import MethodError, MethodTable, Params, bad_params
from intentd.daemon.server.settings_requests import SettingsRequests, widening
from intentd.daemon.utils.statedir import workspace_state_dir


def register(table: MethodTable, core: DaemonCore) -> None:
    requests = SettingsRequests(core.bus)

    async def checkpoint_op(params: Params, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call a method of the workspace's store, opened here too: opening it can fail the same
        ways (a corrupt manifest, say), with the same documented error."""
        from intentd.daemon.checkpoints import CheckpointError

        # Checkpoint ids are numbered per workspace, so the workspace is always named.
        workspace = core.workspace(params)

        def run() -> Any:
            return getattr(core.engine.checkpoint_store(workspace), method)(*args, **kwargs)

        try:
            return await core.in_thread(run)
        except CheckpointError as exc:
            raise MethodError(protocol.CHECKPOINT_ERROR, str(exc)) from None

    async def checkpoints_list(conn: Any, params: Params) -> dict[str, Any]:
        listed = await checkpoint_op(params, "list")
        coverage = await checkpoint_op(params, "coverage")
        return m.CheckpointsList(checkpoints=tuple(map(wire.checkpoint, listed)),
                                 coverage=wire.coverage(coverage)).to_json()

    async def checkpoints_diff(conn: Any, params: Params) -> dict[str, Any]:
        against = params.opt_text("against") or "current"
        if against not in ("current", "next"):
            raise bad_params("against", "must be current or next")
        diffs = await checkpoint_op(params, "diff", params.text("checkpoint_id"), against=against,
                                    path=params.opt_text("path"))
        return m.CheckpointsDiff(diffs=tuple(map(wire.file_diff, diffs))).to_json()

    async def checkpoints_restore(conn: Any, params: Params) -> dict[str, Any]:
        done = await checkpoint_op(params, "restore", params.text("checkpoint_id"),
                                   path=params.opt_text("path"))
        # The safety checkpoint is one like any other: every view shows it at once.
        safety = await checkpoint_op(params, "get", done.safety_checkpoint_id)
        core.bus.publish(protocol.CHECKPOINTS_CREATED, m.CheckpointCreated(
            workspace=core.workspace(params).root_str, checkpoint_id=safety.id,
            label=safety.label, coverage=safety.coverage).to_json())
        return wire.restored(done).to_json()

    def settings_answer(workspace: Workspace) -> dict[str, Any]:
        return {**settings_json(workspace), "pending": requests.listing(workspace.root_str)}

    async def settings_get(conn: Any, params: Params) -> dict[str, Any]:
        return settings_answer(core.workspace(params))

    async def settings_update(conn: Any, params: Params) -> dict[str, Any]:
        """Narrowing applies at once; widening too from the app, else it waits for the app."""
        workspace = core.workspace(params)
        try:
            changes = clean_overrides(params.obj("auto_approve"))
        except ValueError as exc:
            raise bad_params("auto_approve", str(exc)) from None
        wider = {} if core.trust.is_app(conn) else widening_of(workspace, changes)
        apply_overrides(workspace, {k: v for k, v in changes.items() if k not in wider})
        answer = settings_answer(workspace)
        if wider:
            by = f"{conn.client_name}: {core.trust.verdict(conn).why}"
            queued = requests.add(workspace.root_str, wider, by)
            answer = {**settings_answer(workspace), "queued": queued.to_json()}
        return answer

    async def settings_confirm(conn: Any, params: Params) -> dict[str, Any]:
        """A person's answer, in the app, to a widening a script asked for."""
        workspace = core.workspace(params)
        decision = params.text("decision")
        if decision not in (protocol.APPROVE, protocol.REJECT):
            raise bad_params("decision", "must be approve or reject")
        if not core.trust.is_app(conn):
            reason = "widening auto-approval is confirmed only in the desktop app"
            core.trust.record_refusal(conn, protocol.SETTINGS_CONFIRM, params.raw, reason)
            raise MethodError(protocol.PERSON_ONLY, reason, {"method": protocol.SETTINGS_CONFIRM})
        approved = decision == protocol.APPROVE
        request = requests.take(params.text("confirmation_id"), workspace.root_str,
                                "approved" if approved else "rejected")
        if approved:
            apply_overrides(workspace, request.auto_approve)
        return settings_answer(workspace)

    def widening_of(workspace: Workspace, changes: dict[str, bool | int]) -> dict[str, bool | int]:
        # Against what runs now and against the saved overrides (which return with a fixed
        # policy.yaml when an invalid one has them switched off): widening either way waits.
        in_force = workspace.config.policy.to_json()["auto_approve"]
        return {**widening(in_force, changes), **widening(dict(workspace.overrides), changes)}

    def apply_overrides(workspace: Workspace, changes: dict[str, bool | int]) -> None:
        if not changes:
            return
        merged = {**workspace.overrides, **changes}
        path = overrides_path(core.engine, workspace)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"auto_approve": merged}, indent=2))
        workspace.overrides = merged
        workspace.reload()

    async def ledger_query(conn: Any, params: Params) -> dict[str, Any]:
        workspace = core.workspace(params)
        try:
            query = LedgerQuery.from_params(params.raw)
        except BadQuery as exc:
            raise bad_params(exc.param, exc.message) from None
        path = workspace_state_dir(workspace.root, core.engine.home) / "ledger.jsonl"
        if not path.parent.is_dir():  # nothing recorded yet: a read must not create the folder
            return {"entries": [], "older": None}
        # Through the ledger's index: the cost follows what is returned, not the ledger's size.
        page = await core.in_thread(lambda: ledger_index(path).query(query))
        return {"entries": page.entries, "older": page.older}

    for name, handler in [(protocol.CHECKPOINTS_LIST, checkpoints_list),
                          (protocol.CHECKPOINTS_DIFF, checkpoints_diff),
                          (protocol.CHECKPOINTS_RESTORE, checkpoints_restore),
                          (protocol.SETTINGS_GET, settings_get),
                          (protocol.SETTINGS_UPDATE, settings_update),
                          (protocol.SETTINGS_CONFIRM, settings_confirm),
                          (protocol.LEDGER_QUERY, ledger_query)]:
        table.register(name, handler)


def settings_json(workspace: Workspace) -> dict[str, Any]:
    config = workspace.config
    return {"workspace": workspace.root_str, "policy": config.policy.to_json(),
            "overrides": {"auto_approve": dict(workspace.overrides)},
            "error": config.policy_error.to_json() if config.policy_error else None}
