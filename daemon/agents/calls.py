"""One tool call's answer as an agent sees it (daemon or in-process), and how calls are shown."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallResult:
    decision: str                  # "allow" (it ran) or "deny" (it did not)
    stage: str
    reason: str
    ok: bool = False               # the tool ran and succeeded
    output: str = ""
    approved_by: str | None = None  # "auto" | "person" | None
    checkpoint_id: str | None = None
    feedback: str | None = None

    @property
    def ran(self) -> bool:
        return self.decision == "allow"

    @property
    def approval(self) -> str | None:
        """Who approved it, worded for people; None when nobody had to."""
        if self.approved_by in (None, "auto"):
            return None
        return approval_reason(str(self.approved_by))

    @property
    def is_error(self) -> bool:
        return not (self.ran and self.ok)

    def for_model(self) -> str:
        """The tool_result text: the output, or a refusal the agent can act on."""
        if self.ran:
            return self.output or ("(no output)" if self.ok else "the tool failed")
        text = f"Refused by intentd ({self.stage}): {self.reason}"
        if self.feedback and self.feedback not in self.reason:
            text += f"\nThe person said: {self.feedback}"
        return text

    @classmethod
    def from_wire(cls, answer: dict[str, Any]) -> CallResult:
        """From a `tools/call` answer (docs/protocol.md)."""
        result = answer.get("result") or {}
        return cls(decision=str(answer.get("decision", "deny")), stage=str(answer.get("stage", "")),
                   reason=str(answer.get("reason", "")), ok=bool(result.get("ok", False)),
                   output=str(result.get("output", "")), approved_by=answer.get("approved_by"),
                   checkpoint_id=answer.get("checkpoint_id"), feedback=answer.get("feedback"))

    @classmethod
    def refused(cls, stage: str, reason: str) -> CallResult:
        return cls(decision="deny", stage=stage, reason=reason, output=reason)


def approval_reason(by: str) -> str:
    """"approved by a person" (`approved_by` "person"), "approved by the demo script", …"""
    return f"approved by {'a person' if by == 'person' else by}"


def preview(args: Any) -> str:
    """A call's arguments on one line; long strings (file contents) shown as their length."""
    if not isinstance(args, dict):
        return repr(args)[:200]
    shown = {k: (f"[{len(v)} chars]" if isinstance(v, str) and len(v) > 80 else v)
             for k, v in args.items()}
    return json.dumps(shown, ensure_ascii=False, default=str)[:300]


def summary(result: CallResult) -> str:
    """What came of a call, on one line."""
    if not result.ran:
        return f"refused ({result.stage}): {result.reason}"
    first = (result.output.strip().splitlines() or [""])[0][:160]
    status = "ok" if result.ok else "failed"
    by = f", {result.approval}" if result.approval else ""
    checkpoint = f", checkpoint {result.checkpoint_id}" if result.checkpoint_id else ""
    return f"{status}{by}{checkpoint}: {first}"
