"""Which audited calls ran at the same time in one workspace: their audits must not undo each
other's work, since a checkpoint's diff cannot tell whose change is whose.

A writer is a call that may change files. A command proven read-only is audited too when no
kernel holds it to that (a hook-based agent's, or one run without Landlock), but it is no
writer: a change seen meanwhile may be a writer's, so its audit only reports; and it does not
stop a writer's audit from undoing what lies outside that writer's scope.
"""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class Running:
    workspace: str
    id: int
    started_after: int  # how many writers had started in the workspace before this call
    alongside: bool     # a writer was running when this call started
    writer: bool = True


class OverlapTracker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._started: dict[str, int] = defaultdict(int)
        self._running: dict[str, set[int]] = defaultdict(set)

    def begin(self, workspace: str, *, writer: bool = True) -> Running:
        with self._lock:
            token = Running(workspace, next(self._ids), self._started[workspace],
                            bool(self._running[workspace]), writer)
            if writer:
                self._started[workspace] += 1
                self._running[workspace].add(token.id)
            return token

    def end(self, token: Running) -> bool:
        """True when a writer (other than this call) ran in the workspace at any time during it."""
        with self._lock:
            self._running[token.workspace].discard(token.id)
            own = 1 if token.writer else 0
            return token.alongside or self._started[token.workspace] > token.started_after + own
