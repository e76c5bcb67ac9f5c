"""The engine: workspaces, sessions, and the life of a call (lifecycle.py) over the pipeline's
phases (pipeline.py): decide, ask, recheck, before-execute, execute, after."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.checkpoints.inotify import available as inotify_available
from intentd.daemon.engine import pipeline
from intentd.daemon.engine.calls import HANDED_OFF, Evaluation, Outcome, Run, handed_off_answer
from intentd.daemon.engine.config_watch import SharedConfigWatch
from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision, Verdict
from intentd.daemon.engine.ledger import Ledger, LedgerUnwritable
from intentd.daemon.engine.lifecycle import (
    Approver,
    AsyncApprover,
    BlockingWork,
    Execution,
    drive,
    drive_async,
    lifecycle,
)
from intentd.daemon.engine.pipeline import Pipeline, recheck_stages
from intentd.daemon.engine.receipts import receipt
from intentd.daemon.engine.session import Mode, Session
from intentd.daemon.engine.watcher import ConfigWatcher
from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.grants.model import grantable
from intentd.daemon.grants.store import GrantBook
from intentd.daemon.protocol import messages
from intentd.daemon.sandbox.calls import request_for
from intentd.daemon.sandbox.overlap import OverlapTracker, Running
from intentd.daemon.tools.anchor import release
from intentd.daemon.tools.base import ToolContext, ToolFailed, ToolKind, ToolResult
from intentd.daemon.tools.fileio import sha256_file
from intentd.daemon.trace.recording import CallTracing
from intentd.daemon.utils.statedir import state_home, workspace_state_dir
from intentd.daemon.utils.workspaces import is_workspace

__all__ = ["HANDED_OFF", "Engine", "Evaluation", "Execution", "Outcome", "handed_off_answer"]

log = logging.getLogger(__name__)
EventSink = Callable[[str, dict[str, Any]], None]
_call_ids = itertools.count(1)
MAX_UNREPORTED = 10_000
MAX_DROPPED = 1_000  # dropped calls awaiting their receipts: past this, the caller writes one
NEVER_REPORTED = "never reported"


class Engine:
    def __init__(self, home: Path | None = None, *, watch: bool = False, record: bool = True,
                 checkpoints: bool = True, pipeline: Pipeline | None = None) -> None:
        self.home = home or state_home()
        self.watch, self.record, self.use_checkpoints = watch, record, checkpoints
        self.pipeline = pipeline or Pipeline()
        self.recheck = Pipeline(recheck_stages())
        self.workspaces: dict[str, Workspace] = {}
        self.sessions: dict[str, Session] = {}
        self._watchers: dict[str, ConfigWatcher] = {}  # where there is no inotify
        self._config_watch: SharedConfigWatch | None = None  # every workspace's, on Linux
        self._ledgers: dict[str, Ledger] = {}
        self._stores: dict[str, Any] = {}
        self._opening: dict[str, threading.Lock] = {}  # per workspace, while its store opens
        self._opening_ledgers: dict[str, threading.Lock] = {}  # the same, for its ledger
        # calls allowed by tools/authorize whose clients have not reported yet
        self._authorized: dict[str, Run] = {}
        self._lock = threading.RLock()
        self._overlap = OverlapTracker()  # calls at the same time: audits undo none of theirs
        self._in_flight: dict[str, Running] = {}  # authorized calls, until their report
        # calls dropped unreported past MAX_UNREPORTED, for the thread that writes their receipts
        self._unreported: queue.SimpleQueue[tuple[Run, Running | None]] = queue.SimpleQueue()
        self._reporter: threading.Thread | None = None
        self.event_sinks: list[EventSink] = []
        self.tracing = CallTracing(self.home)  # lines written, for blame; spans, for telemetry
        self.grants = GrantBook(self.home)  # a person's remembered answers (daemon/grants)
        self._warmed: set[str] = set()  # workspaces whose checkpoint store was warmed up

    # -- workspaces and sessions -------------------------------------------------------------

    def workspace(self, root: Path, policy_path: Path | None = None) -> Workspace:
        resolved = root.resolve()
        if not resolved.is_dir():
            raise FileNotFoundError(f"workspace {root} is not a folder")
        with self._lock:
            found = self.workspaces.get(str(resolved))
            if found is None:
                found = Workspace(resolved, policy_path)
                if self.watch:  # first: a workspace whose config cannot be watched is not open
                    self._watch_config(found)
                self.workspaces[found.root_str] = found
            if (self.watch and self.use_checkpoints and found.root_str not in self._warmed
                    and is_workspace(resolved)):
                # Only a folder a person made a workspace: no session opens on any other, so
                # none takes a checkpoint there, and `intents/list` on / must not warm up (read
                # and hold) the whole file system. One made a workspace later warms up then.
                self._warmed.add(found.root_str)
                self._warm_up(found)
            return found

    def _watch_config(self, workspace: Workspace) -> None:
        """Reload the workspace's config when it changes: through the one shared inotify
        instance where there is inotify, else a watchdog observer of its own."""
        if self._config_watch is None and inotify_available():
            try:
                self._config_watch = SharedConfigWatch()
            except OSError as exc:
                log.warning("cannot watch config files with inotify (%s); one observer each", exc)
        if self._config_watch is not None:
            self._config_watch.add(workspace)
            return
        watcher = ConfigWatcher(workspace)
        watcher.start()
        self._watchers[workspace.root_str] = watcher

    def _warm_up(self, workspace: Workspace) -> None:
        """Open the workspace's checkpoint store and take its baseline in the background, so no
        tool call waits for a first full scan; progress goes out as checkpoints/progress."""
        def progress(done: int, total: int) -> None:
            self.emit("checkpoints/progress", {"workspace": workspace.root_str, "phase": "reading",
                                                "done": done, "total": total})

        def run() -> None:
            try:
                store = self.checkpoint_store(workspace)
                store.warm_up(progress)  # its baseline is never listed: no checkpoints/created
                self.emit("checkpoints/progress", {"workspace": workspace.root_str,
                                                    "phase": "done", "done": 1, "total": 1})
            except Exception:  # the first checkpoint then scans in the call, as without a warm-up
                log.exception("checkpoints: warming up %s failed", workspace.root)

        threading.Thread(target=run, daemon=True, name=f"warm-up {workspace.root.name}").start()

    def open_session(self, root: Path, *, agent: str = "agent", mode: Mode = Mode.ACT,
                     policy_path: Path | None = None) -> Session:
        session = Session(self.workspace(root, policy_path), agent=agent, mode=mode)
        with self._lock:
            self.sessions[session.id] = session
        return session

    # -- the life of a call (lifecycle.py) ------------------------------------------------------

    def call(self, session: Session, name: Any, args: Any, batch: str | None = None, *,
             approver: Approver, execution: Execution = Execution.HERE,
             blocking: Callable[[BlockingWork], Outcome] | None = None) -> Outcome:
        """The whole life of one call, on this thread: decided, put to `approver` when a person
        must answer, then run (or authorized, or dry-run) and recorded."""
        life = lifecycle(self, session, name, args, batch, execution, approver.withdrawn)
        return drive(life, approver, blocking)

    async def call_async(self, session: Session, name: Any, args: Any, batch: str | None = None,
                         *, approver: AsyncApprover, execution: Execution = Execution.HERE,
                         offload: Callable[[BlockingWork], Awaitable[Outcome]]) -> Outcome:
        """The same life on an event loop: the approver is awaited, and whatever may block (the
        lifecycle says what) goes to `offload`."""
        life = lifecycle(self, session, name, args, batch, execution, approver.withdrawn)
        return await drive_async(life, approver, offload)

    # -- deciding ------------------------------------------------------------------------------

    def decide(self, session: Session, name: Any, args: Any, batch: str | None = None, *,
               decided: Decision | None = None) -> Evaluation:
        """The pipeline's word on a call, and a grant's; changes nothing (see evaluate).
        `decided` is a word taken before the pipeline (the rest of a rejected turn)."""
        started, clock = time.time(), time.perf_counter()
        ctx = CallContext(session, session.workspace.config, name, args, batch)
        if decided is not None:
            decision = decided
        elif self.record and (problem := self.ledger(session.workspace).unwritable()):
            decision = Decision.deny("ledger", f"{problem}; no call runs until it can be recorded")
        else:
            decision = self.pipeline.decide(ctx)
        ev = Evaluation(f"c-{next(_call_ids)}", ctx, decision, started, 0.0)
        self._answer_by_grant(ev)
        ev.decided_ms = (time.perf_counter() - clock) * 1000
        return ev

    def evaluate(self, session: Session, name: Any, args: Any, batch: str | None = None, *,
                 decided: Decision | None = None) -> Evaluation:
        """Decide a call of the session and count it there (repetition, the run of
        auto-approvals): the one place a call is counted, once."""
        ev = self.decide(session, name, args, batch, decided=decided)
        session.count(ev.ctx.tally)
        return ev

    def _answer_by_grant(self, ev: Evaluation) -> None:
        """A grant answers only the approval stage's "ask a person"; every other stage has had
        its say already, and what grantable() rules out asks every time."""
        decision, ctx = ev.decision, ev.ctx
        if decision.verdict is not Verdict.ASK or decision.stage != "approval" or grantable(ctx):
            return
        grant = self.grants.find(ctx)
        if grant is not None:
            ev.grant_id = grant.id
            ev.decision = Decision.allow("approval", f"answered by the person's grant {grant.id}: "
                                                     f"{grant.describe()}")

    def apply_dry_run(self, ev: Evaluation, decision: Decision | None = None) -> None:
        """What `intentd check` lets happen: an intent selected, a read file's hash recorded."""
        if (decision or ev.decision).verdict is not Verdict.ALLOW:
            return
        ctx = ev.ctx
        if ctx.name == "select_active_intent":
            ctx.session.intent_id = ctx.args["intent_id"]
        elif ctx.name == "read_file":
            digest = sha256_file(ctx.paths[0].absolute)
            if digest:
                ctx.session.read_hashes[ctx.paths[0].absolute] = digest

    def may_block(self, ev: Evaluation) -> bool:
        """Whether authorizing the call may block (a checkpoint, a hook, the ledger's intent
        line): an event loop then hands it to a thread. A command proven read-only takes a
        checkpoint too when it is authorized (a client runs it, unconfined), for its audit."""
        ctx = ev.ctx
        audited = ctx.kind is ToolKind.COMMAND and ctx.config.policy.scope_audit != "off"
        return ctx.destructive or audited or bool(ctx.config.policy.hooks.pre_tool)

    # -- the pieces the lifecycle runs after the final decision ------------------------------

    def refuse(self, ev: Evaluation, decision: Decision | None = None) -> Outcome:
        """Record a call that does not run (denied, rejected by a person, withdrawn)."""
        outcome = Outcome(ev.call_id, decision or ev.decision)
        self.record_receipt(ev, outcome, {}, time.perf_counter())
        return outcome

    def run(self, ev: Evaluation, approved_by: str | None,
            decision: Decision | None = None) -> Outcome:
        """Run an allowed or approved call here: recheck, the steps before, the tool, the steps
        after. `decision` is the final word (default: the evaluation's)."""
        run = Run(ev, Outcome(ev.call_id, decision or ev.decision, approved_by=approved_by),
                  here=True)
        try:
            refused = self._before_execute(run)
            if refused is not None:
                return refused
            self._execute_here(run)
            self._after(run)
            return run.outcome
        finally:
            release(ev.held)
            ev.held = ()
            if ev.held_cwd is not None:
                ev.held_cwd.close()
                ev.held_cwd = None

    def authorize(self, ev: Evaluation, approved_by: str | None,
                  decision: Decision | None = None) -> Outcome:
        """For clients that run the tool themselves: the recheck and the steps before, then
        the call waits for the client's report (Engine.report) to take the steps after."""
        run = Run(ev, Outcome(ev.call_id, decision or ev.decision, approved_by=approved_by),
                  here=False)
        refused = self._before_execute(run)
        if refused is not None:
            return refused
        self.apply_dry_run(ev, run.outcome.decision)
        lagging = None
        with self._lock:
            self._authorized[ev.call_id] = run
            if ev.ctx.destructive or run.outcome.checkpoint_id is not None:
                self._in_flight[ev.call_id] = self._overlap.begin(ev.ctx.root,
                                                                  writer=ev.ctx.destructive)
            if len(self._authorized) > MAX_UNREPORTED:
                # a client that never reports must not grow memory forever: the oldest call is
                # dropped, its receipt written on a thread of its own (_report_unreported)
                dropped = self._take(next(iter(self._authorized)))
                if self._unreported.qsize() >= MAX_DROPPED:
                    lagging = dropped
                else:
                    self._unreported.put(dropped)
                    if self._reporter is None:
                        self._reporter = threading.Thread(
                            target=self._report_unreported, daemon=True, name="intentd-unreported")
                        self._reporter.start()
        if lagging is not None:  # that thread is far behind (a ledger held): this caller waits
            self.record_unreported([lagging], NEVER_REPORTED)
        return run.outcome

    def _report_unreported(self) -> None:
        """The receipts of calls dropped unreported, one after another, on a thread of their own:
        the call that dropped one may be on an event loop, and a receipt may wait (a command's
        scope audit, a ledger another process holds). Ends when none is left."""
        while True:
            try:
                dropped = self._unreported.get(timeout=1.0)
            except queue.Empty:
                with self._lock:  # authorize() puts and starts under this lock: none is missed
                    if self._unreported.empty():
                        self._reporter = None
                        return
                continue
            self._record_dropped(dropped)

    def _record_dropped(self, dropped: tuple[Run, Running | None]) -> None:
        try:
            self.record_unreported([dropped], NEVER_REPORTED)
        except Exception:  # a thread's failure must reach the log, not vanish
            log.exception("the receipt of a call never reported could not be written")

    def brief_report(self, call_id: str) -> bool:
        """Whether the receipt of this authorized call runs no program (CallContext.brief)."""
        with self._lock:
            run = self._authorized.get(call_id)
        return run is not None and run.ctx.brief

    def report(self, session: Session, call_id: str, ok: bool, output: str,
               reported: bool = True) -> Outcome | None:
        """The receipt of an authorized call the client ran (its scope audit included); None when
        the call is unknown. `reported` is False when the client never said the call ran."""
        with self._lock:
            run = self._authorized.get(call_id)
            if run is None or run.ctx.session is not session:
                return None
            taken = self._take(call_id)
        return self._finish(*taken, ok, output, reported)

    def _take(self, call_id: str) -> tuple[Run, Running | None]:
        """An authorized call taken out of those awaiting a report (the engine's lock held)."""
        return self._authorized.pop(call_id), self._in_flight.pop(call_id, None)

    def _finish(self, run: Run, running: Running | None, ok: bool, output: str,
                reported: bool) -> Outcome:
        """The steps after a reported (or never reported) call, its receipt last."""
        outcome = run.outcome
        if outcome.decision.verdict is Verdict.ASK:  # it was handed to the agent's own prompt
            outcome.decision = handed_off_answer(reported)
            outcome.approved_by = HANDED_OFF if reported else None
        run.overlapped = running is not None and self._overlap.end(running)
        # one read of each file: its hash, and its text kept for the trace (not read again there)
        written = self.tracing.after(run.ctx, list(run.before), keep=self.record)
        run.kept_after = self.record
        outcome.result = ToolResult(ok, output, written=written)
        self._after(run)
        return outcome

    def forget_session(self, session: Session) -> None:
        """Close a session: authorized calls never reported are recorded as such."""
        self.record_unreported(self.end_session(session))

    def end_session(self, session: Session) -> list[tuple[Run, Running | None]]:
        """The first half of forget_session, quick: the session is gone (no call names it any
        more) and its calls never reported are taken out, for record_unreported."""
        with self._lock:
            self.sessions.pop(session.id, None)
            taken = [self._take(call_id) for call_id, run in list(self._authorized.items())
                     if run.ctx.session is session]
        self.grants.end_session(session.id)
        return taken

    def record_unreported(self, taken: list[tuple[Run, Running | None]],
                          why: str = "the client never reported the result") -> None:
        """The second half: the receipts of calls never reported, taken out (each may wait: a
        command's scope audit, a ledger another process holds)."""
        for run, running in taken:
            self._finish(run, running, False, why, reported=False)

    def _before_execute(self, run: Run) -> Outcome | None:
        """The recheck, then pipeline.BEFORE_EXECUTE; a refusal comes back recorded. The recheck
        runs the gates again on what holds now, since a person may have taken minutes to answer;
        the call then runs on the freshly resolved paths. It never counts the call again. A
        decision made a moment ago (no person asked, no wait) is what holds now: no recheck."""
        ev = run.ev
        if ev.ctx.destructive and ev.stale():
            fresh = CallContext(ev.ctx.session, ev.ctx.session.workspace.config, ev.ctx.name,
                                ev.ctx.args, ev.ctx.batch)
            objection = self.recheck.first_word(fresh)
            if objection is not None:
                return self.refuse(ev, objection)
            ev.ctx = fresh
        for step in pipeline.BEFORE_EXECUTE:
            refusal = step(self, run)
            if refusal is not None:
                return self.refuse(ev, refusal)
        return None

    def _execute_here(self, run: Run) -> None:
        ctx = run.ctx
        self.emit(protocol.TOOLS_STARTED, messages.ToolStarted(
            call_id=run.ev.call_id, session_id=ctx.session.id, tool=ctx.name,
            checkpoint_id=run.outcome.checkpoint_id).to_json())
        audited = ctx.destructive or run.outcome.checkpoint_id is not None
        running = self._overlap.begin(ctx.root, writer=ctx.destructive) if audited else None
        run.outcome.result = self._execute(ctx, run.outcome.approved_by, run.ev)
        run.overlapped = running is not None and self._overlap.end(running)

    def _after(self, run: Run) -> None:
        for step in pipeline.AFTER:
            step(self, run)

    def _execute(self, ctx: CallContext, approved_by: str | None, ev: Evaluation) -> ToolResult:
        assert ctx.tool is not None
        tool_ctx = ToolContext(
            root=ctx.root, paths=tuple(p.absolute for p in ctx.paths),
            cwd=(ev.held_cwd.path() if ev.held_cwd is not None
                 else ctx.cwd.absolute if ctx.cwd else ctx.root),
            intents_lookup=ctx.intents_lookup,
            is_ignored=ctx.config.ignore.ignores,
            sandbox=request_for(ctx, approved_by) if ctx.kind is ToolKind.COMMAND else None,
            anchors=ev.held, shown=ev.shown)
        try:
            return ctx.tool.execute(tool_ctx, ctx.args)
        except ToolFailed as exc:
            return ToolResult(False, str(exc))
        except OSError as exc:
            return ToolResult(False, f"{ctx.name} failed: {exc.strerror or exc}")
        except Exception as exc:
            log.exception("tool %s crashed", ctx.name)
            return ToolResult(False, f"{ctx.name} failed with an internal error: {exc}")

    def take_checkpoint(self, ctx: CallContext, call_id: str, *,
                        reuse: bool = False) -> tuple[str | None, str]:
        """The checkpoint's id, and how it found changes when the watcher alone did not.
        `reuse`: the store's latest checkpoint will do when nothing changed since it (before a
        command that should change nothing), so the store does not fill with empty ones."""
        store = self.checkpoint_store(ctx.session.workspace) if self.use_checkpoints else None
        if store is None:
            return None, ""
        label = f"before {ctx.name} ({call_id})"
        if reuse:
            checkpoint, created = store.latest_or_create(label=label)
        else:
            paths = ([p.relative for p in ctx.paths if p.relative] if ctx.kind is ToolKind.EDIT
                     else None)
            checkpoint, created = store.create(paths, label=label), True
        if not ctx.session.checkpointed:
            # the state before the session's first call: pruning drops it last, so an agent
            # filling the store cannot push out the person's way back
            store.keep_last(checkpoint.id)
            ctx.session.checkpointed = True
        if not created:
            return str(checkpoint.id), ""
        self.emit(protocol.CHECKPOINTS_CREATED, messages.CheckpointCreated(
            workspace=ctx.root, checkpoint_id=checkpoint.id, label=checkpoint.label,
            coverage=checkpoint.coverage).to_json())
        return str(checkpoint.id), str(checkpoint.coverage)

    def checkpoint_store(self, workspace: Workspace) -> Any:
        """The workspace's checkpoint store, opened on first use."""
        from intentd.daemon.checkpoints import CheckpointStore
        from intentd.daemon.utils.statedir import checkpoints_dir

        with self._lock:
            store = self._stores.get(workspace.root_str)
            if store is not None:
                return store
            opening = self._opening.setdefault(workspace.root_str, threading.Lock())
        # Opened outside the engine's lock: setting up the watches of a big workspace must not
        # hold up calls in the others.
        with opening:
            store = self._stores.get(workspace.root_str)
            if store is None:
                # a callable, so the store sees the rules in force after each reload
                store = CheckpointStore(workspace.root, checkpoints_dir(workspace.root, self.home),
                                        ignore_rules=lambda: workspace.config.ignore)
                with self._lock:
                    self._stores[workspace.root_str] = store
            return store

    # -- recording -----------------------------------------------------------------------------

    def ledger(self, workspace: Workspace) -> Ledger:
        """The workspace's ledger, opened on first use: outside the engine's lock, so opening
        one (files, a lock, the chain's head) never holds up calls in the other workspaces."""
        key = workspace.root_str
        with self._lock:
            ledger = self._ledgers.get(key)
            if ledger is not None:
                return ledger
            opening = self._opening_ledgers.setdefault(key, threading.Lock())
        with opening:
            ledger = self._ledgers.get(key)
            if ledger is None:
                ledger = Ledger(workspace_state_dir(workspace.root, self.home) / "ledger.jsonl")
                with self._lock:
                    self._ledgers[key] = ledger
            return ledger

    def record_receipt(self, ev: Evaluation, outcome: Outcome, before: dict[str, str | None],
                       clock: float, kept_after: bool = False) -> None:
        """The call's receipt: the ledger line, the trace, the tools/finished event.
        `kept_after`: the hashes after the call were taken by the trace, with the texts kept."""
        entry = receipt(ev, outcome, before, (time.perf_counter() - clock) * 1000)
        self.tracing.recorded(ev, outcome, before, entry, keep=self.record, kept_after=kept_after)
        self.emit("tools/finished", entry)
        if self.record:
            try:
                self.ledger(ev.ctx.session.workspace).append(entry)
            except LedgerUnwritable:
                if outcome.result is not None:
                    raise  # it ran: its caller must hear that it went unrecorded
                log.error("a call that did not run could not be recorded: %s", entry["reason"])

    def emit(self, name: str, params: dict[str, Any]) -> None:
        for sink in list(self.event_sinks):
            try:
                sink(name, params)
            except Exception:
                log.exception("event sink failed on %s", name)

    def close(self) -> None:
        while True:  # the receipts of dropped calls are written before the ledgers close
            try:
                self._record_dropped(self._unreported.get_nowait())
            except queue.Empty:
                break
        reporter = self._reporter
        if reporter is not None:
            reporter.join(5.0)
        if self._config_watch is not None:
            self._config_watch.stop()
            self._config_watch = None
        for watcher in self._watchers.values():
            watcher.stop()
        for store in self._stores.values():
            store.close()
        for ledger in self._ledgers.values():
            ledger.close()
        self.tracing.close()
        self._watchers.clear()
        self._stores.clear()
        self._ledgers.clear()
