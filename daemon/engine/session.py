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
