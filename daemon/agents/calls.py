"""The answer to one tool call as an agent sees it, whichever way (daemon or in-process) it went."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def ran(self) -> bool:
        return self.decision == "allow"

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
                   checkpoint_id=answer.get("checkpoint_id"), feedback=answer.get("feedback"),
                   data=dict(result.get("data") or {}))

    @classmethod
    def refused(cls, stage: str, reason: str) -> CallResult:
        return cls(decision="deny", stage=stage, reason=reason, output=reason)
