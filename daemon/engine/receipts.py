"""The ledger entry of one call: ToolIntent (what was asked) + ToolReceipt (what happened), as
the protocol's typed LedgerEntry (also the `tools/finished` notification)."""

from __future__ import annotations

import hashlib
import json
import socket
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from intentd.daemon.engine.ledger import summarize_args
from intentd.daemon.protocol import messages

if TYPE_CHECKING:
    from intentd.daemon.engine.decision import Decision
    from intentd.daemon.engine.engine import Evaluation, Outcome


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


def args_record(ev: Evaluation) -> tuple[Any, str]:
    """The call's arguments as the ledger keeps them (long texts shortened) and the sha256 of
    all of them: taken once a call, since its intent line and its receipt both carry them."""
    if ev.args_record is None:
        args = ev.ctx.args
        args_text = json.dumps(args, sort_keys=True, default=repr)
        ev.args_record = (summarize_args(args), hashlib.sha256(args_text.encode()).hexdigest())
    return ev.args_record


def tool_intent(ev: Evaluation) -> messages.ToolIntent:
    """What was asked: the call, its session and intent as they stand now."""
    ctx = ev.ctx
    summary, digest = args_record(ev)
    return messages.ToolIntent(
        id=ev.call_id, time=_iso(ev.started_at), session=ctx.session.id,
        agent=ctx.session.agent, mode=ctx.session.mode.value, workspace=ctx.root,
        intent_id=ctx.session.intent_id, tool=str(ctx.name)[:200], args=summary,
        args_sha256=digest)


def intent_line(ev: Evaluation, decision: Decision) -> dict[str, Any]:
    """The ledger line a call that may change something writes before it runs (steps.py)."""
    return {"v": 1, "phase": "intent", "intent": tool_intent(ev).to_json(),
            "decision": decision.verdict.value, "stage": decision.stage, "reason": decision.reason}


def _sha256(text: str) -> str:
    """A lone surrogate (a file name that is not UTF-8, in a command's output) is hashed as the
    ledger writes it, escaped: never a crash that costs the call its receipt."""
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


def receipt(ev: Evaluation, outcome: Outcome, before: dict[str, str | None],
            execution_ms: float) -> dict[str, Any]:
    result = outcome.result
    entry = messages.LedgerEntry(
        v=1,
        intent=tool_intent(ev),
        decision=outcome.decision.verdict.value,
        stage=outcome.decision.stage,
        reason=outcome.decision.reason,
        approved_by=outcome.approved_by,
        receipt=messages.ToolReceipt(
            result=("success" if result.ok else "error") if result else "not_run",
            output_sha256=_sha256(result.output) if result else None,
            data=result.data if result else {},
            files_before=before,
            files_after=dict(result.written) if result else {},
            checkpoint_id=outcome.checkpoint_id,
            checkpoint_coverage=outcome.checkpoint_coverage,
            timing=messages.Timing(started_at=_iso(ev.started_at),
                                   decided_ms=round(ev.decided_ms, 3),
                                   execution_ms=round(execution_ms, 3)),
            host=socket.gethostname()))
    return entry.to_json()  # the same keys in the same order as ever: the hash chain holds
