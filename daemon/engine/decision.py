"""Decisions are values: allow, ask or deny, with the stage that decided and why."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Verdict(str, Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    stage: str
    reason: str

    @classmethod
    def allow(cls, stage: str, reason: str) -> Decision:
        return cls(Verdict.ALLOW, stage, reason)

    @classmethod
    def ask(cls, stage: str, reason: str) -> Decision:
        return cls(Verdict.ASK, stage, reason)

    @classmethod
    def deny(cls, stage: str, reason: str) -> Decision:
        return cls(Verdict.DENY, stage, reason)

    @property
    def allowed(self) -> bool:
        return self.verdict is Verdict.ALLOW

    def to_json(self) -> dict[str, str]:
        return {"decision": self.verdict.value, "stage": self.stage, "reason": self.reason}
