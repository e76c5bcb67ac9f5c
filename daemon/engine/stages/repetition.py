"""Stage 3: the same call repeated past the limit, or a short cycle of calls, is stopped."""

from __future__ import annotations

import json

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.session import Tally
from intentd.daemon.engine.stages import Finding

CYCLE_LENGTHS = range(2, 6)
CYCLE_REPEATS = 5


def call_key(name: str, args: object) -> str:
    """Canonical text of a call: key order does not matter, value types do (1, 1.0, "1", true)."""
    return json.dumps([name, args], sort_keys=True, separators=(",", ":"), default=repr)


class RepetitionStage:
    name = "repetition"

    def check(self, ctx: CallContext) -> Finding | None:
        """Works out what counting the call would make of the session's history; the session
        takes that (the Tally) only when the call is counted."""
        limit = ctx.config.policy.repetition_limit
        if limit == 0:
            return None
        session = ctx.session
        key = call_key(ctx.name, ctx.args)
        recent = session.recent_calls
        same = session.same_call_count + 1 if recent and recent[-1] == key else 1
        if same > limit:
            return Finding(Decision.deny(self.name, f"{ctx.name} was called with the same "
                                                    f"arguments {limit + 1} times in a row; stop "
                                                    "repeating it and change approach (or ask the "
                                                    "person)"), tally=RESTART)
        cycle = _cycle_length([*recent, key])
        if cycle:
            return Finding(Decision.deny(self.name, f"the same {cycle} calls were repeated "
                                                    f"{CYCLE_REPEATS} times back to back; you are "
                                                    "going in circles: change approach (or ask "
                                                    "the person)"), tally=RESTART)
        return Finding(tally=Tally(key, same))


RESTART = Tally(restart=True)  # a call stopped here: the history starts again after it


def _cycle_length(keys: list[str]) -> int | None:
    for length in CYCLE_LENGTHS:
        span = length * CYCLE_REPEATS
        if len(keys) < span:
            return None
        if keys[-1] != keys[-1 - length]:
            continue  # the cheap test first: the last call must repeat the one a period back
        window = keys[-span:]
        pattern = window[:length]
        if len(set(pattern)) > 1 and all(window[i] == pattern[i % length] for i in range(span)):
            return length
    return None
