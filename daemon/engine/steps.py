"""The steps around executing a call, in the order pipeline.py lists them.

A step of BEFORE_EXECUTE returns a Decision to refuse the call (recorded as its receipt) or
None to go on; a step of AFTER returns None. Steps read and fill in the Run; they reach the
ledger, the checkpoint store and the hooks through the engine.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from intentd.daemon.engine.calls import Evaluation, Run
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.receipts import intent_line
from intentd.daemon.policy.hooks import run_post_hooks, run_pre_hooks
from intentd.daemon.sandbox import git_control, nested_git
from intentd.daemon.sandbox.calls import audited
from intentd.daemon.sandbox.landlock import kernel_abi
from intentd.daemon.tools.anchor import HeldFolder, hold_anchors
from intentd.daemon.tools.base import ToolFailed, ToolKind
from intentd.daemon.tools.files import changed_since_shown

if TYPE_CHECKING:
    from intentd.daemon.engine.engine import Engine

log = logging.getLogger(__name__)
Step = Callable[["Engine", Run], Decision | None]


# -- before executing ---------------------------------------------------------------------------

def record_intent(engine: Engine, run: Run) -> Decision | None:
    """Before anything irreversible (hooks, checkpoint, the tool itself), a call that may
    change something puts its intent in the ledger: whatever happens to its receipt, nothing
    runs unrecorded. Readers skip the line once the receipt (which repeats it) follows."""
    ev, ctx = run.ev, run.ctx
    if not engine.record or ctx.tool is None or not ctx.tool.destructive:
        return None
    line = intent_line(ev, run.outcome.decision)
    try:
        engine.ledger(ctx.session.workspace).append(line)
    except Exception as exc:  # fail closed: no record, no run
        return Decision.deny("ledger", f"the ledger cannot record the call ({exc}); the call did "
                                       "not run")
    return None


def hold_folders(engine: Engine, run: Run) -> Decision | None:
    """From here to the write, a swapped folder cannot redirect an edit run here; nor, to its
    start, a command run here (`cwd: build`, build swapped for a symlink to src/ after the
    person approved `rm -f *.txt` there)."""
    ctx = run.ctx
    if not run.here or ctx.kind not in (ToolKind.EDIT, ToolKind.COMMAND):
        return None
    try:
        if ctx.kind is ToolKind.COMMAND:
            run.ev.held_cwd = HeldFolder(ctx.cwd.absolute if ctx.cwd else ctx.root)
        else:
            run.ev.held = hold_anchors(p.absolute for p in ctx.paths)
    except (OSError, ToolFailed) as exc:
        return Decision.deny("access", str(exc))
    return None


def one_name(engine: Engine, run: Run) -> Decision | None:
    """An edit the agent makes itself (a hook agent's) never lands on a file with other names.
    Written in place (Node's fs.writeFile, Rust's fs::write), a hard link changes every name of
    the file: `ln docs/person.md src/notes.md` made earlier, an edit of src/notes.md rewrites
    the person's docs/person.md, out of scope, and no checkpoint holds it. (An edit run here
    replaces the file by a rename, which leaves the other names as they were.)"""
    if run.here or run.ctx.kind is not ToolKind.EDIT:
        return None
    for path in run.ctx.paths:
        try:
            info = os.lstat(path.absolute)
        except (FileNotFoundError, NotADirectoryError):
            continue  # absent: a new file has one name
        except OSError as exc:  # unknown: refused, as any gate that cannot look
            return Decision.deny("access", f"{path.shown} cannot be looked at ({exc.strerror})")
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            return Decision.deny("access", f"{path.shown} has {info.st_nlink} names (hard links): "
                                           "a write in place changes them all, and the others "
                                           "may be out of scope. Remove this name first, then "
                                           "write the file anew")
    return None


def pre_hooks(engine: Engine, run: Run) -> Decision | None:
    hooks = run.ctx.config.policy.hooks
    if not hooks.pre_tool:
        return None
    veto = run_pre_hooks(hooks.pre_tool, hook_payload(run.ev), run.ctx.root)
    return Decision.deny("pre_hook", f"{veto.reason} ({veto.hook})") if veto is not None else None


def files_before(engine: Engine, run: Run) -> Decision | None:
    run.before = engine.tracing.before(run.ctx, keep=engine.record)
    return None


def as_shown(engine: Engine, run: Run) -> Decision | None:
    """An edit a person approved from its diff goes ahead only over the file the diff was made
    from. The agent may have changed it while the person looked, and read it again so that no
    stale check stops it. A tool run here checks again as it writes (tools.files.as_shown)."""
    shown = run.ev.shown
    if shown is None or run.ctx.kind is not ToolKind.EDIT:
        return None
    for path in run.ctx.paths:
        if shown.get(path.absolute, "") != run.before.get(path.absolute, ""):
            return Decision.deny("stale_file", changed_since_shown(path.shown))
    return None


def checkpoint(engine: Engine, run: Run) -> Decision | None:
    """A destructive call's checkpoint; and one before a command proven read-only that no kernel
    holds to that, so its scope audit runs too (the store's latest checkpoint serves when
    nothing changed since it)."""
    ctx = run.ctx
    unconfined_read = unconfined_read_only(run)
    if not (ctx.destructive or unconfined_read) or ctx.kind is ToolKind.MCP:
        return None
    try:
        run.outcome.checkpoint_id, run.outcome.checkpoint_coverage = engine.take_checkpoint(
            ctx, run.ev.call_id, reuse=unconfined_read)
        if ctx.kind is ToolKind.COMMAND and run.outcome.checkpoint_id is not None:
            # no checkpoint saves .git/: its audit compares these, and names repositories made
            store = engine.checkpoint_store(ctx.session.workspace)
            mark = store.git_mark()
            run.git_before = git_control.Before(
                git_control.snapshot(ctx.root),
                nested_git.snapshots(ctx.root, store.git_repositories()), mark)
    except Exception as exc:
        log.exception("checkpoint failed")
        return Decision.deny("checkpoint", f"no checkpoint could be taken ({exc}); refused to be "
                                           "safe")
    return None


def unconfined_read_only(run: Run) -> bool:
    """A command the policy proves read-only that the kernel does not stop from writing: one a
    hook-based agent runs itself, or one run here without Landlock. Run here with Landlock, a
    read-only command may write nothing in the workspace (the gate gives it no intent, so
    no folder is granted): it needs no checkpoint, and no audit."""
    ctx = run.ctx
    if ctx.kind is not ToolKind.COMMAND or ctx.destructive or ctx.config.policy.scope_audit == "off":
        return False  # off: no audit follows, so its checkpoint would serve nothing
    return not run.here or kernel_abi() <= 0


# -- after executing ----------------------------------------------------------------------------

def scope_audit(engine: Engine, run: Run) -> Decision | None:
    """After a command (run here or reported by a hook): out-of-scope changes undone, or only
    reported when other calls changed the workspace meanwhile."""
    ctx, outcome = run.ctx, run.outcome
    if outcome.result is None or ctx.kind is not ToolKind.COMMAND or outcome.checkpoint_id is None:
        return None
    outcome.result = audited(ctx, outcome.result, engine.checkpoint_store(ctx.session.workspace),
                             outcome.checkpoint_id, run.overlapped, run.git_before)
    return None


def learn(engine: Engine, run: Run) -> Decision | None:
    """The session learns what the call read and wrote: what it wrote, it knows, so the next
    edit of that file is not stale."""
    result, session = run.outcome.result, run.ctx.session
    if result is None or not result.ok:
        return None
    if run.here and run.ctx.name == "select_active_intent":
        session.intent_id = result.data["intent_id"]
    session.read_hashes.update(result.read)
    session.read_hashes.update({p: d for p, d in result.written.items() if d})
    return None


def post_hooks(engine: Engine, run: Run) -> Decision | None:
    hooks, result = run.ctx.config.policy.hooks, run.outcome.result
    if run.here and result is not None and hooks.post_tool:
        payload = {**hook_payload(run.ev), "result": result.to_json()}
        run.outcome.problems = run_post_hooks(hooks.post_tool, payload, run.ctx.root)
    return None


def receipt(engine: Engine, run: Run) -> Decision | None:
    engine.record_receipt(run.ev, run.outcome, run.before, run.clock, run.kept_after)
    return None


def hook_payload(ev: Evaluation) -> dict[str, Any]:
    ctx = ev.ctx
    return {"tool": ctx.name, "args": ctx.args, "workspace": ctx.root,
            "session": ctx.session.id, "intent": ctx.session.intent_id, "call_id": ev.call_id}
