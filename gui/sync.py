"""Keeps the plain state in step with the daemon: a full load on (re)connect, then notifications."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from intentd.daemon import protocol
from intentd.gui.connection import (
    CONNECTION_LOST,
    ConnectionState,
    DaemonConnection,
    RpcFailure,
)
from intentd.gui.state.activity import ActivityLog
from intentd.gui.state.approvals import PendingApprovals
from intentd.gui.state.coverage import CheckpointCoverage
from intentd.gui.state.records import (
    Approval,
    Checkpoint,
    ConfigError,
    Intent,
    LedgerEntry,
    WatchCoverage,
)
from intentd.gui.state.workspaces import WorkspaceRegistry

LEDGER_LIMIT = 500


class StateSync(QObject):
    """Loads approvals, workspaces, intents, activity and checkpoints; applies notifications."""

    loaded = Signal()  # everything asked for after a (re)connect has been answered
    request_failed = Signal(str)  # a human-readable message

    def __init__(self, connection: DaemonConnection, approvals: PendingApprovals,
                 workspaces: WorkspaceRegistry, activity: ActivityLog,
                 extra_workspaces: list[str] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.connection = connection
        self.approvals = approvals
        self.workspaces = workspaces
        self.activity = activity
        self.coverage = CheckpointCoverage(self)  # what each workspace's checkpoints can see
        self.extra_workspaces = list(extra_workspaces or [])
        self.is_loaded = False
        self._outstanding = 0  # requests of the current load not answered yet
        self._load = 0  # counts loads; an answer to an earlier load's request is not counted
        self._requested: set[str] = set()  # workspaces asked for since the last reload
        # Approvals announced or resolved while approvals/list is on its way: its answer may
        # have been taken before them, and must not undo them.
        self._announced: dict[str, Approval] | None = None
        self._gone: set[str] = set()
        # Workspaces dropped because their folder is gone: a late answer or a notification
        # about one (the daemon reports the intents file gone with it) must not bring it back.
        self._dropped: set[str] = set()
        connection.state_changed.connect(self._on_connection_state_changed)
        connection.notification_received.connect(self._on_connection_notification_received)
        activity.older_requested.connect(self._on_activity_older_requested)
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            protocol.APPROVALS_REQUESTED: self._approval_requested,
            protocol.APPROVALS_RESOLVED: self._approval_resolved,
            protocol.INTENTS_CHANGED: self._intents_changed,
            protocol.INTENTS_ERROR: self._intents_error,
            protocol.TOOLS_FINISHED: self._tool_finished,
            protocol.CHECKPOINTS_CREATED: self._checkpoint_created,
            protocol.CHECKPOINTS_PROGRESS: self._checkpoint_progress,
            protocol.SESSIONS_OPENED: self._session_opened,
            protocol.SESSIONS_CLOSED: self._session_closed,
        }

    # -- loading ---------------------------------------------------------------------------
    def reload(self) -> None:
        """Ask the daemon for everything again (after a connect, or F5)."""
        self.is_loaded = False
        self._outstanding = 0
        self._load += 1
        self._requested = set()
        self._announced, self._gone = {}, set()
        self._ask(protocol.APPROVALS_LIST, {}, self._on_approvals_list)
        self._ask(protocol.WORKSPACES_LIST, {}, self._on_workspaces_list)
        for path in self.extra_workspaces:
            self.load_workspace(path)

    def load_workspace(self, path: str) -> None:
        """intents/list (which makes the daemon load the workspace), ledger and checkpoints."""
        self._requested.add(path)
        self._ask(protocol.INTENTS_LIST, {"workspace": path},
                  lambda r: self._on_intents_list(path, r), workspace=path)
        self._ask(protocol.LEDGER_QUERY, {"workspace": path, "limit": LEDGER_LIMIT},
                  lambda r: self._on_ledger_query(path, r), workspace=path)
        self.load_checkpoints(path)

    def load_checkpoints(self, path: str) -> None:
        self._ask(protocol.CHECKPOINTS_LIST, {"workspace": path},
                  lambda r: self._on_checkpoints_list(path, r), workspace=path)

    def load_settings(self, path: str) -> None:
        self._ask(protocol.SETTINGS_GET, {"workspace": path},
                  lambda r: self.workspaces.set_settings(path, r))

    def _ask(self, method: str, params: dict[str, Any],
             on_result: Callable[[dict[str, Any]], None], workspace: str | None = None) -> None:
        """Send a request of the load; `loaded` waits for its answer. Exactly one of the two
        callbacks runs, later, even when the request could not be sent.

        An answer about `workspace` that comes in after a reload which no longer asked for it
        is dropped: the daemon answers concurrently, so it may arrive after the reload's
        workspaces/list, and must not bring back a workspace that list left out.
        """
        load = self._load
        self._outstanding += 1

        def done(result: Any) -> None:
            try:
                stale = workspace is not None and (
                workspace in self._dropped
                or (load != self._load and workspace not in self._requested))
                if isinstance(result, dict) and not stale:
                    on_result(result)
            finally:
                self._answered(load)

        def failed(failure: RpcFailure) -> None:
            if failure.code == CONNECTION_LOST:
                return  # never answered: the load is not complete (a reconnect loads again)
            # A workspace the daemon cannot load (a deleted folder) is not worth a dialog.
            if failure.code != protocol.UNKNOWN_WORKSPACE:
                self.request_failed.emit(f"{method}: {failure.message}")
            self._answered(load)

        self.connection.request(method, params, done, failed)

    def _answered(self, load: int) -> None:
        if load != self._load:
            return  # a request of an earlier load: the current one does not wait for it
        self._outstanding -= 1
        if self._outstanding == 0 and not self.is_loaded:
            self.is_loaded = True
            self.loaded.emit()

    def _on_connection_state_changed(self, state: str) -> None:
        if state == ConnectionState.CONNECTED:
            self.reload()
        elif state == ConnectionState.DISCONNECTED:
            self.is_loaded = False
            # A daemon that goes away refuses what waited (-32006): nothing is left to answer.
            self.approvals.clear()
            self.coverage.forget_warm_ups()  # one cut short never says it is done

    # -- results ---------------------------------------------------------------------------
    def _on_approvals_list(self, result: dict[str, Any]) -> None:
        items = [Approval.from_json(a) for a in result.get("approvals") or []
                 if isinstance(a, dict)]
        announced, self._announced = self._announced or {}, None
        listed = {a.id for a in items}
        self.approvals.replace([a for a in items if a.id not in self._gone]
                               + [a for a in announced.values() if a.id not in listed])
        for approval in self.approvals.approvals():
            self._learn_workspace(approval.workspace)

    def _on_workspaces_list(self, result: dict[str, Any]) -> None:
        listed = {str(item.get("workspace")) for item in result.get("workspaces") or []
                  if isinstance(item, dict)}
        for path in self.workspaces.paths():  # deleted or moved away since: no workspace now
            if path not in listed and path not in self.extra_workspaces and not os.path.isdir(path):
                self.workspaces.remove(path)
                self.coverage.forget(path)
                self._dropped.add(path)
        for item in result.get("workspaces") or []:
            if not isinstance(item, dict) or not item.get("workspace"):
                continue
            path = str(item["workspace"])
            self._dropped.discard(path)
            errors = [e for e in map(ConfigError.from_json, item.get("errors") or []) if e]
            self.workspaces.set_summary(path, int(item.get("sessions") or 0), errors)
            if path not in self._requested:
                self.load_workspace(path)

    def _on_intents_list(self, path: str, result: dict[str, Any]) -> None:
        path = str(result.get("workspace") or path)
        intents = [Intent.from_json(i) for i in result.get("intents") or [] if isinstance(i, dict)]
        selected = result.get("selected")
        self.workspaces.set_intents(
            path, intents,
            {str(k): str(v) for k, v in selected.items() if v} if isinstance(selected, dict)
            else {},
            [str(w) for w in result.get("warnings") or []])
        self.workspaces.set_intents_error(path, ConfigError.from_json(result.get("error")))

    def _on_ledger_query(self, path: str, result: Any, older: bool = False) -> None:
        if not isinstance(result, dict):
            return
        self.activity.merge((LedgerEntry.from_json(e) for e in result.get("entries") or []
                             if isinstance(e, dict)), older=older)
        cursor = result.get("older")
        self.activity.set_older(path, cursor if isinstance(cursor, str) else None)

    def _on_activity_older_requested(self, path: str, cursor: str) -> None:
        """The person pages back through a workspace's ledger (not part of a load)."""
        def failed(failure: RpcFailure) -> None:
            self.activity.set_older(path, cursor)  # may be asked again
            self.request_failed.emit(f"{protocol.LEDGER_QUERY}: {failure.message}")

        self.connection.request(protocol.LEDGER_QUERY, {"workspace": path, "limit": LEDGER_LIMIT,
                                                        "before": cursor},
                                lambda r: self._on_ledger_query(path, r, older=True), failed)

    def _on_checkpoints_list(self, path: str, result: dict[str, Any]) -> None:
        items = [Checkpoint.from_json(c) for c in result.get("checkpoints") or []
                 if isinstance(c, dict)]
        self.workspaces.set_checkpoints(path, sorted(items, key=lambda c: -c.created_at))
        self.coverage.set_coverage(path, WatchCoverage.from_json(result.get("coverage")))

    def _learn_workspace(self, path: str) -> None:
        if path and path not in self._requested and path not in self._dropped:
            self.workspaces.ensure(path)
            self.load_workspace(path)

    # -- notifications ---------------------------------------------------------------------
    def _on_connection_notification_received(self, method: str, params: dict[str, Any]) -> None:
        handler = self._handlers.get(method)
        if handler is not None:
            handler(params)

    def _approval_requested(self, params: dict[str, Any]) -> None:
        approval = Approval.from_json(params)
        if self._announced is not None:
            self._announced[approval.id] = approval
        self._learn_workspace(approval.workspace)
        self.approvals.add(approval)

    def _approval_resolved(self, params: dict[str, Any]) -> None:
        approval_id = str(params.get("approval_id"))
        if self._announced is not None:
            self._announced.pop(approval_id, None)
            self._gone.add(approval_id)
        self.approvals.remove(approval_id, str(params.get("resolution")))

    def _intents_changed(self, params: dict[str, Any]) -> None:
        path = str(params.get("workspace") or "")
        if not path or path in self._dropped:
            return
        warnings = params.get("warnings")
        self.workspaces.set_intents(
            path, [Intent.from_json(i) for i in params.get("intents") or [] if isinstance(i, dict)],
            warnings=[str(w) for w in warnings] if isinstance(warnings, list) else None)
        if not isinstance(warnings, list):
            # intents/changed leaves the warnings out; intents/list has them. Only they are
            # taken from its answer: the intents and the error have notifications of their own.
            self._refresh_warnings(path)

    def _intents_error(self, params: dict[str, Any]) -> None:
        path = str(params.get("workspace") or "")
        if path and path not in self._dropped:
            self.workspaces.set_intents_error(path, ConfigError.from_json(params.get("error")))

    def _tool_finished(self, params: dict[str, Any]) -> None:
        entry = LedgerEntry.from_json(params)
        self.activity.add(entry)
        if entry.checkpoint_id and entry.workspace:
            # What the call made may be more folders than the watcher can watch: say so now.
            self.load_checkpoints(entry.workspace)
        if entry.tool == "select_active_intent" and entry.workspace:
            # The selection lives in the daemon's sessions: ask which session holds what now.
            self._refresh_intents(entry.workspace)

    def _refresh_intents(self, path: str) -> None:
        def listed(result: Any) -> None:
            if isinstance(result, dict) and path not in self._dropped:
                self._on_intents_list(path, result)

        self.connection.request(protocol.INTENTS_LIST, {"workspace": path}, listed)

    def _refresh_warnings(self, path: str) -> None:
        def listed(result: Any) -> None:
            warnings = result.get("warnings") if isinstance(result, dict) else None
            if isinstance(warnings, list) and path not in self._dropped:
                self.workspaces.set_warnings(path, [str(w) for w in warnings])

        self.connection.request(protocol.INTENTS_LIST, {"workspace": path}, listed)

    def _checkpoint_created(self, params: dict[str, Any]) -> None:
        path = str(params.get("workspace") or "")
        if path:
            self.load_checkpoints(path)

    def _checkpoint_progress(self, params: dict[str, Any]) -> None:
        """The daemon reads a workspace in the background for its first checkpoint."""
        path, done, total = (params.get(k) for k in ("workspace", "done", "total"))
        if not isinstance(path, str) or not path:
            return
        finished = params.get("phase") == "done"
        self.coverage.set_warm_up(path, done if isinstance(done, int) else 0,
                                  total if isinstance(total, int) else 0, finished)
        if finished:
            self.load_checkpoints(path)  # the watcher is set up by now: what does it see?

    def _session_opened(self, params: dict[str, Any]) -> None:
        path = str(params.get("workspace") or "")
        if path:
            self._dropped.discard(path)  # a session opened there: the folder is back
            self._learn_workspace(path)
            self.workspaces.session_opened(path)

    def _session_closed(self, params: dict[str, Any]) -> None:
        self.workspaces.session_closed(str(params.get("workspace") or ""),
                                       str(params.get("session_id") or ""))
