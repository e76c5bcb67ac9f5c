"""One deadline for a whole hook call: each wait gets what is left of it, and none is left over."""

# Claude Code kills a hook that outlives its timeout and then lets the call through, so the
# hook must answer (deny) before that, however many steps it has waited on.

from __future__ import annotations

import time
from dataclasses import dataclass


class DeadlineExceeded(TimeoutError):
    """The hook ran out of time; the message says what it was waiting for."""


@dataclass(frozen=True)
class Deadline:
    at: float        # time.monotonic() by which the hook answers
    seconds: float   # the whole budget, for messages

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds, seconds)

    def renewed(self, seconds: float) -> Deadline:
        """The same start, another budget (an event that says its own timeout)."""
        return Deadline(self.at - self.seconds + seconds, seconds)

    def left(self) -> float:
        return self.at - time.monotonic()

    def budget(self, doing: str, cap: float | None = None, keep: float = 0.0) -> float:
        """Seconds `doing` may take: what is left less `keep` (time needed after it), at most
        `cap`; DeadlineExceeded when nothing is left."""
        left = self.left() - keep
        if left <= 0:
            raise self.exceeded(doing)
        return left if cap is None else min(cap, left)

    def exceeded(self, doing: str) -> DeadlineExceeded:
        return DeadlineExceeded(f"intentd ran out of its {self.seconds:g} s for this hook call "
                                f"while {doing}")
