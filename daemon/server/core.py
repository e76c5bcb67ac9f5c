"""The daemon's shared state: the engine, the event bus, the approval queue and the tool threads."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import fields
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.engine import Engine, Evaluation, Outcome
from intentd.daemon.engine.lifecycle import BlockingWork
from intentd.daemon.engine.session import Session
from intentd.daemon.engine.workspace import Workspace, WorkspaceConfig
from intentd.daemon.policy.config import AutoApprove
from intentd.daemon.policy.hooks import kill_running_hooks
from intentd.daemon.protocol import messages
from intentd.daemon.server import wire
from intentd.daemon.server.approvals import ApprovalQueue, QueueApprover
from intentd.daemon.server.events import EventBus
from intentd.daemon.server.rpc import MethodError, Params
from intentd.daemon.server.threads import ToolThreads
from intentd.daemon.server.trust_gate import TrustGate
from intentd.daemon.utils.statedir import workspace_state_dir

log = logging.getLogger(__name__)


class DaemonCore:
    def __init__(self, engine: Engine, loop: asyncio.AbstractEventLoop) -> None:
        self.engine = engine
        self.bus = EventBus(loop)
        self.approvals = ApprovalQueue(self.bus)
        self.trust = TrustGate(engine, self.bus.publish)  # who may call the person methods
        self.trust.approvals = self.approvals
        self.threads = ToolThreads(loop)  # a stuck tool blocks neither others nor shutdown
        self.stopping = False
        self._recording: set[asyncio.Future[None]] = set()  # closed sessions' receipts under way
        engine.event_sinks.append(self._on_engine_event)
        self._watched: set[str] = set()

    # -- lookups that answer with protocol errors ----------------------------------------------

    def session(self, params: Params) -> Session:
        session_id = params.text("session_id")
        session = self.engine.sessions.get(session_id)
        if session is None:
            raise MethodError(protocol.UNKNOWN_SESSION, f"session {session_id!r} is not open")
        return session

    def workspace(self, params: Params, name: str = "workspace") -> Workspace:
        path = Path(params.text(name)).expanduser()
        known = self.engine.workspaces.get(str(path.resolve()))
        if known is not None:
            return known
        try:
            workspace = self.engine.workspace(path)
        except OSError as exc:
            raise MethodError(protocol.UNKNOWN_WORKSPACE, str(exc), {"param": name}) from None
        self.watch(workspace)
        return workspace

    def watch(self, workspace: Workspace) -> None:
        if workspace.root_str not in self._watched:
            self._watched.add(workspace.root_str)
            workspace.overrides = load_overrides(self.engine, workspace)
            if workspace.overrides:
                workspace.reload()
            workspace.add_listener(self._on_config_changed)

    # -- what a call's lifecycle needs from the daemon -----------------------------------------

    def approver(self, timeout: float | None, native_prompt: bool = False) -> QueueApprover:
        """The approval queue as one call's approver; with `native_prompt` (the agent can ask
        the person itself) a call goes to the agent's prompt while no approver is connected."""
        return QueueApprover(self.approvals, lambda: self.stopping, timeout, native_prompt)

    async def offload(self, need: BlockingWork) -> Outcome:
        """A lifecycle's blocking work on a tool thread, counted against its session."""
        outcome: Outcome = await self.threads.run(need.ev.ctx.session.id, need.work,
                                                  brief=need.ev.ctx.brief)
        return outcome

    async def in_thread(self, fn: Any, *args: Any, brief: bool = False) -> Any:
        """fn(*args) on a tool thread, counted against the session it works for; `brief` work
        runs no program (ToolThreads.run)."""
        session = next((a.ctx.session if isinstance(a, Evaluation) else a for a in args
                        if isinstance(a, Evaluation | Session)), None)
        return await self.threads.run(session.id if session else "daemon", fn, *args,
                                      brief=brief)

    async def close_session(self, session: Session) -> None:
        """Close a session at once, and write the receipts of its calls never reported on a
        tool thread: a command's scope audit, or a ledger another process holds, must not stop
        the loop. That goes on if the caller is cancelled (a client that hung up); while the
        daemon stops they are written here, the last thing it does for them (Server.stop)."""
        taken = self.engine.end_session(session)
        self._closed(session)
        if self.stopping or not taken:
            self.engine.record_unreported(taken)
            return
        recording = asyncio.ensure_future(
            self.threads.run(session.id, self.engine.record_unreported, taken))
        self._recording.add(recording)
        recording.add_done_callback(self._recorded)
        await asyncio.shield(recording)

    def close_sessions(self) -> None:
        """At a stop: every session still open is closed here, its calls never reported
        recorded."""
        for session in list(self.engine.sessions.values()):
            self.engine.forget_session(session)
            self._closed(session)

    def _recorded(self, done: asyncio.Future[None]) -> None:
        self._recording.discard(done)
        if not done.cancelled() and done.exception() is not None:
            log.error("the receipts of a closed session's calls: %s", done.exception())

    def _closed(self, session: Session) -> None:
        self.bus.publish(protocol.SESSIONS_CLOSED, messages.SessionClosed(
            session_id=session.id, workspace=session.workspace.root_str).to_json())

    # -- events --------------------------------------------------------------------------------

    def _on_engine_event(self, name: str, params: dict[str, Any]) -> None:
        self.bus.publish_threadsafe(name, params)

    def _on_config_changed(self, workspace: Workspace, old: WorkspaceConfig,
                           new: WorkspaceConfig) -> None:
        if new.intents != old.intents:
            self.bus.publish_threadsafe(protocol.INTENTS_CHANGED, messages.IntentsChanged(
                workspace=workspace.root_str, intents=wire.intents(new),
                warnings=tuple(new.intents.warnings)).to_json())
        if str(new.intents_error) != str(old.intents_error):
            self.bus.publish_threadsafe(protocol.INTENTS_ERROR, messages.IntentsError(
                workspace=workspace.root_str, error=wire.config_error(new.intents_error)).to_json())

    def close(self) -> None:
        self.approvals.stop_all()
        if self.threads.close():
            log.warning("stopping with tool calls still running; their hooks are killed")
        kill_running_hooks()


def overrides_path(engine: Engine, workspace: Workspace) -> Path:
    return workspace_state_dir(workspace.root, engine.home) / "settings.json"


def load_overrides(engine: Engine, workspace: Workspace) -> dict[str, bool | int]:
    try:
        data = json.loads(overrides_path(engine, workspace).read_text())
    except (OSError, ValueError):
        return {}
    auto = data.get("auto_approve") if isinstance(data, dict) else None
    try:
        return clean_overrides(auto if isinstance(auto, dict) else {})
    except ValueError:
        log.warning("ignoring invalid saved settings for %s", workspace.root)
        return {}


def clean_overrides(raw: dict[str, Any]) -> dict[str, bool | int]:
    """Check auto_approve overrides: known keys, booleans, max_consecutive a number ≥ 0."""
    known = {f.name for f in fields(AutoApprove)}
    clean: dict[str, bool | int] = {}
    for key, value in raw.items():
        if key not in known:
            raise ValueError(f"unknown auto_approve setting {key!r}")
        if key == "max_consecutive":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError("max_consecutive must be a whole number ≥ 0")
        elif not isinstance(value, bool):
            raise ValueError(f"{key} must be true or false")
        clean[key] = value
    return clean
