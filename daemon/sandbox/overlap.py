"""Which destructive calls ran at the same time in one workspace: their audits must not undo
each other's work, since a checkpoint's diff cannot tell whose change is whose."""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class Running:
    workspace: str
    id: int
    started_after: int  # how many calls had started in the workspace before this one
    alongside: bool     # another call was running when this one started


class OverlapTracker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._started: dict[str, int] = defaultdict(int)
        self._running: dict[str, set[int]] = defaultdict(set)

    def begin(self, workspace: str) -> Running:
        with self._lock:
            token = Running(workspace, next(self._ids), self._started[workspace],
                            bool(self._running[workspace]))
            self._started[workspace] += 1
            self._running[workspace].add(token.id)
            return token

    def end(self, token: Running) -> bool:
        """True when another call ran in the workspace at any time during this one."""
        with self._lock:
            self._running[token.workspace].discard(token.id)
            return token.alongside or self._started[token.workspace] > token.started_after + 1
