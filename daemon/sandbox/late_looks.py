"""The link sweep of a command a hook-based agent ran itself, after its report was answered.

Such a command ran unconfined, so its scope audit sweeps for writes through hard links
(checkpoints/sweep.py): a stat of every file, ~100 ms at 50,000 files, where the rest of the
audit costs a few. The report is answered after the rest; a second audit, with the sweep,
runs here on a thread of its own, while the agent's model reads the answer. Until it is done,
no one gets the workspace's checkpoint store (Engine.checkpoint_store waits): the next call's
checkpoint, another call's audit and a person's restore all see the workspace as the second
audit left it, never a write it has yet to undo.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from intentd.daemon.checkpoints.errors import CheckpointError

log = logging.getLogger(__name__)
SETTLE_SECONDS = 120.0  # a sweep still running this long is stuck (a hung mount): refuse


class StillSweeping(CheckpointError):
    """The workspace's last command is still being audited: its store is not handed out."""


class LateLooks:
    """The second looks under way, counted per workspace."""

    def __init__(self, settle_seconds: float = SETTLE_SECONDS) -> None:
        self.settle_seconds = settle_seconds
        self._state = threading.Condition()
        self._running: dict[str, int] = {}

    def start(self, workspace: str, look: Callable[[], None]) -> None:
        """Run `look` on a thread of its own; the workspace is unsettled until it ends."""
        with self._state:
            self._running[workspace] = self._running.get(workspace, 0) + 1
        try:
            threading.Thread(target=self._run, args=(workspace, look), daemon=True,
                             name="intentd-late-look").start()
        except BaseException:
            self._ended(workspace)
            raise

    def settle(self, workspace: str, timeout: float | None = None) -> None:
        """Return once no second look runs in the workspace; StillSweeping when the wait ran
        out (the caller's work is refused, never done on a half-audited workspace)."""
        wait = self.settle_seconds if timeout is None else timeout
        with self._state:
            if not self._state.wait_for(lambda: workspace not in self._running, wait):
                raise StillSweeping(f"the scope audit of the last command in {workspace} is "
                                    f"still sweeping after {wait:.0f} s")

    def settle_all(self, timeout: float) -> bool:
        """At a stop: wait for every look; False when some still run after `timeout`."""
        with self._state:
            return self._state.wait_for(lambda: not self._running, timeout)

    def _run(self, workspace: str, look: Callable[[], None]) -> None:
        try:
            look()
        except Exception:  # the look records its own failures; this is a last resort
            log.exception("the second look of a scope audit in %s failed", workspace)
        finally:
            self._ended(workspace)

    def _ended(self, workspace: str) -> None:
        with self._state:
            left = self._running[workspace] - 1
            if left:
                self._running[workspace] = left
            else:
                del self._running[workspace]
            self._state.notify_all()
