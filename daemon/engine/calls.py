"""One call as the engine holds it: decided (Evaluation), under way (Run), done (Outcome)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.sandbox.git_control import Before
from intentd.daemon.tools.anchor import Anchor, HeldFolder
from intentd.daemon.tools.base import ToolResult

# approved_by of a call handed to the agent's own prompt that the agent then reported as run
HANDED_OFF = "person (in the agent's own prompt)"
# A decision this fresh stands without a recheck (seconds). The recheck is for what changes
# while a person answers or a call waits its turn; an edit landing within these milliseconds
# races the recheck itself just the same. A swapped folder is caught by hold_folders anyway.
RECHECK_AFTER = 0.05


@dataclass
class Evaluation:
    """A decided call: what the pipeline (and a grant) said, before any person is asked."""

    call_id: str
    ctx: CallContext
    decision: Decision
    started_at: float
    decided_ms: float
    held: tuple[Anchor, ...] = ()  # a file tool's folders, held open from the recheck to the write
    held_cwd: HeldFolder | None = None  # a command's folder, held open from the recheck to its start
    grant_id: str | None = None  # the person's grant that answered it, when one did
    args_record: tuple[Any, str] | None = None  # the ledger's args and their sha256 (receipts.py)
    # a file edit's file as the person was shown its diff: sha256 of its bytes, None when absent
    shown: dict[str, str | None] | None = None
    decided_at: float = field(default_factory=time.monotonic)  # when the pipeline had its say

    def stale(self) -> bool:
        """Whether what the pipeline saw may have changed since: it did not allow the call
        itself (a person answered), or the call waited (for a thread, say) longer than
        RECHECK_AFTER. The recheck then runs the gates again."""
        return not self.decision.allowed or time.monotonic() - self.decided_at > RECHECK_AFTER

    @property
    def approved_by(self) -> str | None:
        """Who let the call through without a person: "auto", a grant; None when it asks or is
        refused."""
        if not self.decision.allowed:
            return None
        return f"grant {self.grant_id}" if self.grant_id else "auto"


@dataclass
class Outcome:
    """What came of a call: its final decision and, when it ran, its result."""

    call_id: str
    decision: Decision
    result: ToolResult | None = None
    checkpoint_id: str | None = None
    approved_by: str | None = None
    problems: list[str] = field(default_factory=list)
    checkpoint_coverage: str = ""  # how the checkpoint found changes, when not by the watcher alone
    feedback: str | None = None  # what the person said with their answer, for the agent

    def to_json(self) -> dict[str, Any]:
        return {"call_id": self.call_id, **self.decision.to_json(),
                "result": self.result.to_json() if self.result else None,
                "checkpoint_id": self.checkpoint_id, "approved_by": self.approved_by}


@dataclass
class Run:
    """A call past its final decision, from the recheck to the receipt: what the steps of
    pipeline.BEFORE_EXECUTE and pipeline.AFTER read and fill in."""

    ev: Evaluation
    outcome: Outcome            # filled in step by step; recorded as the receipt
    here: bool                  # the tool runs here; False: the client runs it and reports
    clock: float = field(default_factory=time.perf_counter)
    before: dict[str, str | None] = field(default_factory=dict)  # hashes of the files it writes
    overlapped: bool = False    # other calls changed the workspace while it ran
    kept_after: bool = False    # the hashes after it were read with the texts kept (trace)
    git_before: Before | None = None  # git's state before a command, for its audit

    @property
    def ctx(self) -> CallContext:
        return self.ev.ctx


def handed_off_answer(reported: bool) -> Decision:
    """What the ledger records of a call handed to the agent's own prompt: its report means the
    person approved it there; no report means they declined, or the agent stopped."""
    if reported:
        return Decision.allow("approval", "approved by the person in the agent's own prompt, as "
                                          "the agent's hook reported (no approver was connected "
                                          "to intentd)")
    return Decision.deny("approval", "handed to the agent's own prompt and never reported as run: "
                                     "the person declined there, or the agent stopped")
