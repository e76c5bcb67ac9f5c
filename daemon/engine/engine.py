"""The engine: workspaces, sessions, deciding a call, and running it (hooks, checkpoint, receipt)."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision, Verdict
from intentd.daemon.engine.ledger import Ledger, LedgerUnwritable
from intentd.daemon.engine.pipeline import Pipeline, recheck_stages
from intentd.daemon.engine.receipts import receipt
from intentd.daemon.engine.session import Mode, Session
from intentd.daemon.engine.watcher import ConfigWatcher
from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.grants.model import grantable
from intentd.daemon.grants.store import GrantBook
from intentd.daemon.policy.hooks import run_post_hooks, run_pre_hooks
from intentd.daemon.sandbox.calls import audited, request_for
from intentd.daemon.sandbox.overlap import OverlapTracker, Running
from intentd.daemon.tools.anchor import Anchor, hold_anchors, release
from intentd.daemon.tools.base import ToolContext, ToolFailed, ToolKind, ToolResult
from intentd.daemon.tools.fileio import sha256_file
from intentd.daemon.trace.recording import CallTracing
from intentd.daemon.utils.statedir import state_home, workspace_state_dir

log = logging.getLogger(__name__)
EventSink = Callable[[str, dict[str, Any]], None]
_call_ids = itertools.count(1)
MAX_UNREPORTED = 10_000


@dataclass
class Evaluation:
    """A decided call, waiting to be run, refused, or put to a person."""

    call_id: str
    ctx: CallContext
    decision: Decision
    started_at: float
    decided_ms: float
    held: tuple[Anchor, ...] = ()  # a file tool's folders, held open from the recheck to the write
    grant_id: str | None = None  # the person's grant that answered it, when one did


@dataclass
class Outcome:
    call_id: str
    decision: Decision
    result: ToolResult | None = None
    checkpoint_id: str | None = None
    approved_by: str | None = None
    problems: list[str] = field(default_factory=list)
    checkpoint_coverage: str = ""  # how the checkpoint found changes, when not by the watcher alone

    def to_json(self) -> dict[str, Any]:
        return {"call_id": self.call_id, **self.decision.to_json(),
                "result": self.result.to_json() if self.result else None,
                "checkpoint_id": self.checkpoint_id, "approved_by": self.approved_by}


HANDED_OFF = "person (in the agent's own prompt)"


def handed_off_answer(reported: bool) -> Decision:
    """What the ledger records of a call handed to the agent's own prompt: its report means the
    person approved it there; no report means they declined, or the agent stopped."""
    if reported:
        return Decision.allow("approval", "approved by the person in the agent's own prompt, as "
                                          "the agent's hook reported (no approver was connected "
                                          "to intentd)")
    return Decision.deny("approval", "handed to the agent's own prompt and never reported as run: "
                                     "the person declined there, or the agent stopped")


class Engine:
    def __init__(self, home: Path | None = None, *, watch: bool = False, record: bool = True,
                 checkpoints: bool = True, pipeline: Pipeline | None = None) -> None:
        self.home = home or state_home()
        self.watch, self.record, self.use_checkpoints = watch, record, checkpoints
        self.pipeline = pipeline or Pipeline()
        self.recheck = Pipeline(recheck_stages())
        self.workspaces: dict[str, Workspace] = {}
        self.sessions: dict[str, Session] = {}
        self._watchers: dict[str, ConfigWatcher] = {}
        self._ledgers: dict[str, Ledger] = {}
        self._stores: dict[str, Any] = {}
        self._opening: dict[str, threading.Lock] = {}  # per workspace, while its store opens
        # calls allowed by tools/authorize whose clients have not reported yet
        self._authorized: dict[str, tuple[Evaluation, Outcome, dict[str, str | None], float]] = {}
        self._lock = threading.RLock()
        self._overlap = OverlapTracker()  # calls at the same time: audits undo none of theirs
        self._in_flight: dict[str, Running] = {}  # authorized calls, until their report
        self.event_sinks: list[EventSink] = []
        self.tracing = CallTracing(self.home)  # lines written, for blame; spans, for telemetry
        self.grants = GrantBook(self.home)  # a person's remembered answers (daemon/grants)

    # -- workspaces and sessions -------------------------------------------------------------

    def workspace(self, root: Path, policy_path: Path | None = None) -> Workspace:
        resolved = root.resolve()
        if not resolved.is_dir():
            raise FileNotFoundError(f"workspace {root} is not a folder")
        with self._lock:
            found = self.workspaces.get(str(resolved))
            if found is None:
                found = Workspace(resolved, policy_path)
                self.workspaces[found.root_str] = found
                if self.watch:
                    watcher = ConfigWatcher(found)
                    watcher.start()
                    self._watchers[found.root_str] = watcher
                    if self.use_checkpoints:
                        self._warm_up(found)
            return found

    def _warm_up(self, workspace: Workspace) -> None:
        """Open the workspace's checkpoint store and take its baseline in the background, so no
        tool call waits for a first full scan; progress goes out as checkpoints/progress."""
        def progress(done: int, total: int) -> None:
            self._emit("checkpoints/progress", {"workspace": workspace.root_str, "phase": "reading",
                                                "done": done, "total": total})

        def run() -> None:
            try:
                store = self.checkpoint_store(workspace)
                store.warm_up(progress)  # its baseline is never listed: no checkpoints/created
                self._emit("checkpoints/progress", {"workspace": workspace.root_str,
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

    # -- deciding ------------------------------------------------------------------------------

    def evaluate(self, session: Session, name: Any, args: Any, batch: str | None = None) -> Evaluation:
        started, clock = time.time(), time.perf_counter()
        ctx = CallContext(session, session.workspace.config, name, args, batch)
        if batch is not None and session.rejected_batch == batch:
            decision = Decision.deny("approval", "skipped: the person rejected an earlier call of "
                                                 "this turn")
        elif self.record and (problem := self.ledger(session.workspace).unwritable()):
            decision = Decision.deny("ledger", f"{problem}; no call runs until it can be recorded")
        else:
            decision = self.pipeline.decide(ctx)
        ev = Evaluation(f"c-{next(_call_ids)}", ctx, decision, started, 0.0)
        self._answer_by_grant(ev)
        ev.decided_ms = (time.perf_counter() - clock) * 1000
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

    def apply_dry_run(self, ev: Evaluation) -> None:
        """What `intentd check` lets happen: an intent selected, a read file's hash recorded."""
        if ev.decision.verdict is not Verdict.ALLOW:
            return
        ctx = ev.ctx
        if ctx.name == "select_active_intent":
            ctx.session.intent_id = ctx.args["intent_id"]
        elif ctx.name == "read_file":
            digest = sha256_file(ctx.paths[0].absolute)
            if digest:
                ctx.session.read_hashes[ctx.paths[0].absolute] = digest

    # -- running -------------------------------------------------------------------------------

    def refuse(self, ev: Evaluation, decision: Decision | None = None) -> Outcome:
        """Record a call that does not run (denied, rejected by a person, withdrawn)."""
        outcome = Outcome(ev.call_id, decision or ev.decision)
        self._record(ev, outcome, {}, time.perf_counter())
        return outcome

    def run(self, ev: Evaluation, approved_by: str) -> Outcome:
        """Run an allowed or approved call: pre-hooks, checkpoint, execute, post-hooks, receipt."""
        try:
            return self._run(ev, approved_by)
        finally:
            release(ev.held)
            ev.held = ()

    def _run(self, ev: Evaluation, approved_by: str) -> Outcome:
        clock = time.perf_counter()
        prepared = self._prepare(ev, hold=True)
        if isinstance(prepared, Outcome):
            return prepared
        before, checkpoint_id, coverage = prepared
        ctx = ev.ctx  # after _prepare: the rechecked context
        self._emit("tools/started", {"call_id": ev.call_id, "session_id": ctx.session.id,
                                     "tool": ctx.name, "checkpoint_id": checkpoint_id})
        running = self._overlap.begin(ctx.root) if ctx.destructive else None
        result = self._execute(ctx, approved_by, ev.held)
        overlapped = running is not None and self._overlap.end(running)
        result = self._scope_audit(ctx, checkpoint_id, result, overlapped)
        self._apply_effects(ctx, result)
        outcome = Outcome(ev.call_id, ev.decision, result, checkpoint_id, approved_by,
                          checkpoint_coverage=coverage)
        hooks = ctx.config.policy.hooks
        if hooks.post_tool:
            payload = {**self._hook_payload(ev), "result": result.to_json()}
            outcome.problems = run_post_hooks(hooks.post_tool, payload, ctx.root)
        self._record(ev, outcome, before, clock)
        return outcome

    def authorize(self, ev: Evaluation, approved_by: str) -> Outcome:
        """For clients that run the tool themselves: pre-hooks and checkpoint, then allow."""
        clock = time.perf_counter()
        prepared = self._prepare(ev)
        if isinstance(prepared, Outcome):
            return prepared
        before, checkpoint_id, coverage = prepared
        self.apply_dry_run(ev)
        outcome = Outcome(ev.call_id, ev.decision, None, checkpoint_id, approved_by,
                          checkpoint_coverage=coverage)
        with self._lock:
            self._authorized[ev.call_id] = (ev, outcome, before, clock)
            if ev.ctx.destructive:
                self._in_flight[ev.call_id] = self._overlap.begin(ev.ctx.root)
            overflow = next(iter(self._authorized.values())) if len(
                self._authorized) > MAX_UNREPORTED else None
        if overflow is not None:  # a client that never reports must not grow memory forever
            self.report(overflow[0].ctx.session, overflow[0].call_id, False, "never reported",
                        reported=False)
        return outcome

    def _prepare(self, ev: Evaluation, hold: bool = False
                 ) -> Outcome | tuple[dict[str, str | None], str | None, str]:
        """Recheck, pre-hooks, then the checkpoint of a destructive call; a refusal comes back as
        Outcome. The recheck runs the gates again on what holds now, since a person may have
        taken minutes to answer; the call then runs on the freshly resolved paths."""
        if ev.ctx.destructive:
            fresh = CallContext(ev.ctx.session, ev.ctx.session.workspace.config, ev.ctx.name,
                                ev.ctx.args, ev.ctx.batch)
            objection = self.recheck.first_word(fresh)
            if objection is not None:
                return self.refuse(ev, objection)
            ev.ctx = fresh
        ctx = ev.ctx
        problem = self._record_intent(ev)
        if problem is not None:
            return self.refuse(ev, Decision.deny("ledger", f"{problem}; the call did not run"))
        if hold and ctx.kind is ToolKind.EDIT:  # from here, a swapped folder cannot redirect it
            try:
                ev.held = hold_anchors(p.absolute for p in ctx.paths)
            except (OSError, ToolFailed) as exc:
                return self.refuse(ev, Decision.deny("access", str(exc)))
        hooks = ctx.config.policy.hooks
        if hooks.pre_tool:
            veto = run_pre_hooks(hooks.pre_tool, self._hook_payload(ev), ctx.root)
            if veto is not None:
                return self.refuse(ev, Decision.deny("pre_hook", f"{veto.reason} ({veto.hook})"))
        before = self.tracing.before(ctx, keep=self.record)
        checkpoint_id, coverage = None, ""
        if ctx.destructive and ctx.kind is not ToolKind.MCP:
            try:
                checkpoint_id, coverage = self._checkpoint(ctx, ev.call_id)
            except Exception as exc:
                log.exception("checkpoint failed")
                return self.refuse(ev, Decision.deny("checkpoint", f"no checkpoint could be taken "
                                                                   f"({exc}); refused to be safe"))
        return before, checkpoint_id, coverage

    def report(self, session: Session, call_id: str, ok: bool, output: str,
               reported: bool = True) -> Outcome | None:
        """The receipt of an authorized call the client ran (its scope audit included); None when
        the call is unknown. `reported` is False when the client never said the call ran."""
        with self._lock:
            entry = self._authorized.get(call_id)
            if entry is None or entry[0].ctx.session is not session:
                return None
            del self._authorized[call_id]
            running = self._in_flight.pop(call_id, None)
        ev, outcome, before, clock = entry
        if outcome.decision.verdict is Verdict.ASK:  # it was handed to the agent's own prompt
            outcome.decision = handed_off_answer(reported)
            outcome.approved_by = HANDED_OFF if reported else None
        overlapped = running is not None and self._overlap.end(running)
        written = {path: sha256_file(path) for path in before}
        outcome.result = self._scope_audit(ev.ctx, outcome.checkpoint_id,
                                           ToolResult(ok, output, written=written), overlapped)
        if ok:
            session.read_hashes.update({p: d for p, d in written.items() if d})
        self._record(ev, outcome, before, clock)
        return outcome

    def forget_session(self, session: Session) -> None:
        """Close a session: authorized calls never reported are recorded as such."""
        with self._lock:
            self.sessions.pop(session.id, None)
            unreported = [k for k, v in self._authorized.items() if v[0].ctx.session is session]
        for call_id in unreported:
            self.report(session, call_id, False, "the client never reported the result",
                        reported=False)
        self.grants.end_session(session.id)

    def _execute(self, ctx: CallContext, approved_by: str | None = None,
                 held: tuple[Anchor, ...] = ()) -> ToolResult:
        assert ctx.tool is not None
        tool_ctx = ToolContext(
            root=ctx.root, paths=tuple(p.absolute for p in ctx.paths),
            cwd=ctx.cwd.absolute if ctx.cwd else ctx.root, intents_lookup=ctx.intents_lookup,
            is_ignored=ctx.config.ignore.ignores,
            sandbox=request_for(ctx, approved_by) if ctx.kind is ToolKind.COMMAND else None,
            anchors=held)
        try:
            return ctx.tool.execute(tool_ctx, ctx.args)
        except ToolFailed as exc:
            return ToolResult(False, str(exc))
        except OSError as exc:
            return ToolResult(False, f"{ctx.name} failed: {exc.strerror or exc}")
        except Exception as exc:
            log.exception("tool %s crashed", ctx.name)
            return ToolResult(False, f"{ctx.name} failed with an internal error: {exc}")

    def _scope_audit(self, ctx: CallContext, checkpoint_id: str | None, result: ToolResult,
                     overlapped: bool = False) -> ToolResult:
        """After a command (run here or reported by a hook): out-of-scope changes undone, or
        only reported when other calls changed the workspace meanwhile."""
        if ctx.kind is not ToolKind.COMMAND or checkpoint_id is None:
            return result
        return audited(ctx, result, self.checkpoint_store(ctx.session.workspace), checkpoint_id,
                       overlapped)

    @staticmethod
    def _apply_effects(ctx: CallContext, result: ToolResult) -> None:
        if not result.ok:
            return
        session = ctx.session
        if ctx.name == "select_active_intent":
            session.intent_id = result.data["intent_id"]
        session.read_hashes.update(result.read)
        # What the session wrote, it knows: the next edit of that file is not stale.
        session.read_hashes.update({p: d for p, d in result.written.items() if d})

    def _checkpoint(self, ctx: CallContext, call_id: str) -> tuple[str | None, str]:
        """The checkpoint's id, and how it found changes when the watcher alone did not."""
        store = self.checkpoint_store(ctx.session.workspace) if self.use_checkpoints else None
        if store is None:
            return None, ""
        paths = [p.relative for p in ctx.paths if p.relative] if ctx.kind is ToolKind.EDIT else None
        checkpoint = store.create(paths, label=f"before {ctx.name} ({call_id})")
        self._emit("checkpoints/created", {"workspace": ctx.root, "checkpoint_id": checkpoint.id,
                                           "label": checkpoint.label,
                                           "coverage": checkpoint.coverage})
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
        with self._lock:
            ledger = self._ledgers.get(workspace.root_str)
            if ledger is None:
                path = workspace_state_dir(workspace.root, self.home) / "ledger.jsonl"
                ledger = self._ledgers[workspace.root_str] = Ledger(path)
            return ledger

    def _record_intent(self, ev: Evaluation) -> str | None:
        """Before anything irreversible (hooks, checkpoint, the tool itself), a call that may
        change something puts its intent in the ledger: whatever happens to its receipt, nothing
        runs unrecorded. Readers skip the line once the receipt (which repeats it) follows."""
        ctx = ev.ctx
        if not self.record or ctx.tool is None or not ctx.tool.destructive:
            return None
        entry = receipt(ev, Outcome(ev.call_id, ev.decision), {}, 0.0)
        line = {"v": entry["v"], "phase": "intent", "intent": entry["intent"],
                "decision": entry["decision"], "stage": entry["stage"], "reason": entry["reason"]}
        try:
            self.ledger(ctx.session.workspace).append(line)
        except Exception as exc:  # fail closed: no record, no run
            return f"the ledger cannot record the call ({exc})"
        return None

    def _record(self, ev: Evaluation, outcome: Outcome, before: dict[str, str | None],
                clock: float) -> None:
        entry = receipt(ev, outcome, before, (time.perf_counter() - clock) * 1000)
        self.tracing.recorded(ev, outcome, before, entry, keep=self.record)
        self._emit("tools/finished", entry)
        if self.record:
            try:
                self.ledger(ev.ctx.session.workspace).append(entry)
            except LedgerUnwritable:
                if outcome.result is not None:
                    raise  # it ran: its caller must hear that it went unrecorded
                log.error("a call that did not run could not be recorded: %s", entry["reason"])

    @staticmethod
    def _hook_payload(ev: Evaluation) -> dict[str, Any]:
        ctx = ev.ctx
        return {"tool": ctx.name, "args": ctx.args, "workspace": ctx.root,
                "session": ctx.session.id, "intent": ctx.session.intent_id, "call_id": ev.call_id}

    def _emit(self, name: str, params: dict[str, Any]) -> None:
        for sink in list(self.event_sinks):
            try:
                sink(name, params)
            except Exception:
                log.exception("event sink failed on %s", name)

    def close(self) -> None:
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
