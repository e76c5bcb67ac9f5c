"""initialize, sessions/*, workspaces/list, intents/*."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from intentd.daemon import __version__, protocol
from intentd.daemon.engine.session import Mode
from intentd.daemon.protocol import messages as m
from intentd.daemon.sandbox.status import sandbox_status
from intentd.daemon.server import wire
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.methods.tools import call_tool
from intentd.daemon.server.rpc import MethodError, MethodTable, Params, bad_params
from intentd.daemon.utils.workspaces import PERSONS_FOLDER, enclosing_workspace, is_workspace


def not_a_workspace(root: Path) -> str | None:
    """Why a session may not open on this folder (resolved), or None. A session's folder is
    where its paths are "inside": a session on `/`, a home folder or a workspace's sub-folder
    would read what the person's ignore rules hide, and outside files, as inside. So it must be
    a folder a person made a workspace (`.orchestration/`, which no agent may write)."""
    if is_workspace(root):
        return None
    enclosing = enclosing_workspace(root.parent)
    if enclosing is not None:
        return (f"{root} is inside the workspace {enclosing}, whose .orchestration/ applies to it: "
                f"open the session on {enclosing}")
    return (f"{root} is not an intentd workspace (it has no {PERSONS_FOLDER}/ folder): the "
            "person makes it one with `intentd init` there")


def register(table: MethodTable, core: DaemonCore) -> None:
    async def initialize(conn: Any, params: Params) -> dict[str, Any]:
        version = params.raw.get("protocol_version", protocol.PROTOCOL_VERSION)
        if version != protocol.PROTOCOL_VERSION:
            raise MethodError(protocol.UNSUPPORTED_VERSION, f"protocol version {version!r} is not "
                           f"supported; this daemon speaks {protocol.PROTOCOL_VERSION}")
        conn.client_name = str(params.raw.get("client", "client"))[:100]
        return m.Initialized(
            protocol_version=protocol.PROTOCOL_VERSION, server=f"intentd {__version__}",
            pid=os.getpid(), sandbox=wire.sandbox(sandbox_status()),
            agent_process=(_record_agent(conn, params, conn.client_name)
                           if "agent_process" in params.raw else None)).to_json()

    async def sessions_open(conn: Any, params: Params) -> dict[str, Any]:
        workspace = core.workspace(params)
        # Checked on the folder as resolved for the session, not the path as given: a symlink
        # there could be swapped between two resolutions (loading a folder warms nothing up).
        refusal = not_a_workspace(workspace.root)
        if refusal:
            raise MethodError(protocol.UNKNOWN_WORKSPACE, refusal, {"param": "workspace"})
        mode_name = params.opt_text("mode") or "act"
        if mode_name not in ("act", "plan"):
            raise bad_params("mode", "must be act or plan")
        agent = (params.opt_text("agent") or conn.client_name)[:100]
        if core.engine.record:
            # Opened here, on a thread: the first call's decision (on the event loop) then finds
            # it open, so a ledger another process holds locked stalls this session only.
            await core.in_thread(core.engine.ledger, workspace)
        session = core.engine.open_session(workspace.root, agent=agent, mode=Mode(mode_name))
        conn.sessions.add(session.id)
        opened = m.SessionOpened(session_id=session.id, workspace=workspace.root_str,
                                 agent=agent, mode=mode_name)
        core.bus.publish(protocol.SESSIONS_OPENED, opened.to_json())
        if "agent_process" in params.raw:
            opened = replace(opened, agent_process=_record_agent(conn, params, session.id))
        return opened.to_json()

    async def sessions_close(conn: Any, params: Params) -> dict[str, Any]:
        await conn.close_session(core.session(params))
        return m.Closed(closed=True).to_json()

    async def sessions_list(conn: Any, params: Params) -> dict[str, Any]:
        root = core.workspace(params).root_str if params.raw.get("workspace") else None
        return m.SessionsList(sessions=tuple(
            wire.session(s) for s in list(core.engine.sessions.values())
            if root is None or s.workspace.root_str == root)).to_json()

    async def workspaces_list(conn: Any, params: Params) -> dict[str, Any]:
        sessions = list(core.engine.sessions.values())
        return m.WorkspacesList(workspaces=tuple(m.WorkspaceSummary(
            workspace=root, sessions=sum(s.workspace is ws for s in sessions),
            pending=len(core.approvals.listing(root)),
            errors=tuple(e for e in map(wire.config_error, (ws.config.intents_error,
                                                            ws.config.policy_error)) if e),
        ) for root, ws in list(core.engine.workspaces.items())
            if os.path.isdir(root))).to_json()  # a folder deleted or moved away is no workspace

    async def intents_list(conn: Any, params: Params) -> dict[str, Any]:
        workspace = core.workspace(params)
        config = workspace.config
        return m.IntentsList(
            workspace=workspace.root_str, intents=wire.intents(config),
            error=wire.config_error(config.intents_error),
            warnings=tuple(config.intents.warnings),
            selected={s.id: s.intent_id for s in list(core.engine.sessions.values())
                      if s.workspace is workspace and s.intent_id}).to_json()

    async def intents_select(conn: Any, params: Params) -> dict[str, Any]:
        session = core.session(params)
        answer = await call_tool(core, session, "select_active_intent",
                                 {"intent_id": params.text("intent_id")}, None, None)
        selected = answer.decision == "allow" and answer.result is not None
        return m.IntentSelected(
            decision=m.Decision(decision=answer.decision, stage=answer.stage, reason=answer.reason),
            context=answer.result.output if selected and answer.result else None).to_json()

    def _record_agent(conn: Any, params: Params, label: str) -> m.AgentProcessNote:
        """The agent process this client works for: its tree is the agent's from now on."""
        why_not = core.trust.record_agent(conn, params.raw["agent_process"], label)
        return m.AgentProcessNote(recorded=why_not is None, note=why_not)

    for name, handler in [(protocol.INITIALIZE, initialize), (protocol.SESSIONS_OPEN, sessions_open),
                          (protocol.SESSIONS_CLOSE, sessions_close),
                          (protocol.SESSIONS_LIST, sessions_list),
                          (protocol.WORKSPACES_LIST, workspaces_list),
                          (protocol.INTENTS_LIST, intents_list),
                          (protocol.INTENTS_SELECT, intents_select)]:
        table.register(name, handler)

