"""What the app holds of the daemon's answers: the protocol's typed shapes
(intentd.daemon.protocol.messages), with what the views need of them added.

Parsing is the protocol's, tolerant of missing and mistyped keys.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from intentd.daemon.protocol import messages as wire


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return "" if value is None else str(value)


def _strs(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def workspace_name(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or path


def local_clock(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).strftime("%H:%M:%S") if seconds else ""


# The shapes the app keeps as the daemon sends them.
Approval = wire.Approval
ConfigError = wire.ConfigError
Intent = wire.Intent
Checkpoint = wire.Checkpoint
FileDiff = wire.FileDiff
WatchCoverage = wire.WatchCoverage


@dataclass(frozen=True)
class LedgerEntry:
    """A ledger entry (wire.LedgerEntry) as the app lists it: flat, with what its receipt says."""

    call_id: str
    time: str  # ISO 8601, UTC
    workspace: str
    session: str
    agent: str
    intent_id: str | None
    tool: str
    decision: str
    stage: str
    reason: str
    approved_by: str | None
    result: str
    # a command's sandbox: True confined, False ran unconfined (sandbox_note says why), None n/a
    confined: bool | None = None
    sandbox_note: str = ""
    undone: tuple[str, ...] = ()        # changes outside the scope the audit undid
    out_of_scope: tuple[str, ...] = ()  # changes outside the scope it found (undone or not)
    audit_error: str = ""               # the scope audit could not run: why
    checkpoint_id: str | None = None  # the checkpoint taken before it ran (destructive calls)
    checkpoint_coverage: str = ""  # how its checkpoint found changes, when not by the watcher alone

    @classmethod
    def from_json(cls, data: Any) -> LedgerEntry:
        return cls.from_wire(wire.LedgerEntry.from_json(data))

    @classmethod
    def from_wire(cls, entry: wire.LedgerEntry) -> LedgerEntry:
        """The entry as the app lists it: the call, its decision, and what its receipt says."""
        intent, receipt = entry.intent, entry.receipt
        sandbox = _dict(receipt.data.get("sandbox"))
        audit = _dict(receipt.data.get("scope_audit"))
        confined = sandbox.get("confined")
        return cls(call_id=intent.id, time=intent.time, workspace=intent.workspace,
                   session=intent.session, agent=intent.agent, intent_id=intent.intent_id,
                   tool=intent.tool, decision=entry.decision, stage=entry.stage,
                   reason=entry.reason, approved_by=entry.approved_by, result=receipt.result,
                   confined=confined if isinstance(confined, bool) else None,
                   sandbox_note=_str(sandbox, "note"), undone=_strs(audit, "undone"),
                   out_of_scope=tuple(str(item[0]) for item in audit.get("out_of_scope") or []
                                      if isinstance(item, list) and item),
                   audit_error=_str(audit, "error"),
                   checkpoint_id=receipt.checkpoint_id,
                   checkpoint_coverage=receipt.checkpoint_coverage)

    @property
    def local_time(self) -> str:
        try:
            return datetime.fromisoformat(self.time).astimezone().strftime("%H:%M:%S")
        except ValueError:
            return self.time
