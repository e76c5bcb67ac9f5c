"""Whether this machine can confine commands, in words for receipts, `intentd doctor` and the app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from intentd.daemon.sandbox.landlock import kernel_abi, unavailable_reason

NETWORK_ABI = 4  # Landlock TCP bind/connect rules
SCOPE_ABI = 6    # signals and abstract Unix sockets kept inside the sandbox


@dataclass(frozen=True)
class SandboxStatus:
    abi: int
    summary: str  # one line: what holds for commands on this machine

    @property
    def available(self) -> bool:
        return self.abi > 0

    def to_json(self) -> dict[str, Any]:
        """For the `initialize` answer: the app's status bar says it from the start."""
        return {"confined": self.available, "landlock_abi": self.abi, "summary": self.summary}


def sandbox_status() -> SandboxStatus:
    abi = kernel_abi()
    if abi <= 0:
        return SandboxStatus(0, unconfined_note())
    network = ("TCP refused to commands that run unasked, unless sandbox.network allows it"
               if abi >= NETWORK_ABI else
               f"network not confined (TCP rules need Landlock ABI {NETWORK_ABI})")
    return SandboxStatus(abi, f"commands confined by Landlock ABI {abi}: writes only in the "
                              f"intent's scope, {network}")


def unconfined_note() -> str:
    return (f"commands run UNCONFINED: {unavailable_reason()}; only the scope audit after each "
            "command holds them to the intent")
