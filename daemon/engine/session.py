"""A session: one agent working in one workspace, with its selected intent and what it has read."""

from __future__ import annotations

import itertools
import secrets
from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from intentd.daemon.engine.workspace import Workspace


class Mode(str, Enum):
    ACT = "act"
    PLAN = "plan"  # write tools are refused


_counter = itertools.count(1)


@dataclass(slots=True)
class Tally:
    """What counting one call changes in its session. Stages work it out while deciding; the
    session takes it once, when the call is counted (Session.count), so a dry decision or a
    recheck of an approved call changes nothing. A value, never changed once made (not frozen:
    see Finding)."""

    key: str | None = None           # the call's canonical text, appended to the recent calls
    same_in_row: int = 0             # how many times in a row that call has now been made
    restart: bool = False            # repetition stopped the call: its history starts again
    auto_in_row: int | None = None   # the new run of auto-approved changes (None: unchanged)

    def merged(self, later: Tally | None) -> Tally:
        if later is None:
            return self
        rep = self if later.key is None and not later.restart else later
        auto = later.auto_in_row if later.auto_in_row is not None else self.auto_in_row
        return Tally(rep.key, rep.same_in_row, rep.restart, auto)


def new_session_id() -> str:
    return f"s-{next(_counter)}-{secrets.token_hex(3)}"


@dataclass
class Session:
    workspace: Workspace
    agent: str = "agent"
    mode: Mode = Mode.ACT
    id: str = field(default_factory=new_session_id)
    intent_id: str | None = None
    # sha256 of each file (absolute path) as the session last read or wrote it: the stale-file check.
    read_hashes: dict[str, str] = field(default_factory=dict)
    # canonical call keys, newest last: repetition and cycle detection.
    recent_calls: deque[str] = field(default_factory=lambda: deque(maxlen=32))
    same_call_count: int = 0
    auto_approved_in_row: int = 0
    # The agent turn (batch) a person rejected: the rest of that batch is skipped.
    rejected_batch: str | None = None
    # Whether a checkpoint was taken for this session yet: its first is kept last by pruning.
    checkpointed: bool = False

    def count(self, tally: Tally | None) -> None:
        """Count a call: the one place the repetition history and the auto-approval run change."""
        if tally is None:
            return
        if tally.restart:
            self.recent_calls.clear()
            self.same_call_count = 0
        elif tally.key is not None:
            self.recent_calls.append(tally.key)
            self.same_call_count = tally.same_in_row
        if tally.auto_in_row is not None:
            self.auto_approved_in_row = tally.auto_in_row
