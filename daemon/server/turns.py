"""Blocking jobs take turns: one starts when the one before it ends, or has run for a lease.

Python threads share one interpreter lock. Eight tool threads running at once hand it to each
other at every system call (a SQLite statement, a file read): under 8 clients that was ~120
context switches and 3.5 ms of daemon CPU per gated write, against ~18 and 2 ms when jobs ran one
at a time. A job that runs past the lease (a hook, a command, a slow disk, a lock another process
holds) stops holding the others back, so a stuck job delays another by at most the lease, once.

It lives on the event loop: a job waiting for its turn holds no thread.
"""

from __future__ import annotations

import asyncio
import collections
import itertools

LEASE_SECONDS = 0.025  # past this, a job under way no longer keeps the next one waiting


class Turns:
    """Tokens for jobs: take() before the job starts, give() once it has ended (on the loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, lease: float = LEASE_SECONDS) -> None:
        self._loop = loop
        self.lease = lease
        self._started: dict[int, float] = {}  # the jobs under way: token -> when they started
        self._waiting: collections.deque[asyncio.Future[int]] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None
        self._tokens = itertools.count()

    async def take(self) -> int:
        """A token once no job under way is younger than the lease; first come, first served."""
        if not self._waiting and self._free():
            return self._grant()
        waiter: asyncio.Future[int] = self._loop.create_future()
        self._waiting.append(waiter)
        self._arm()
        try:
            return await waiter
        except BaseException:  # cancelled: out of the line, and a turn given meanwhile passed on
            if waiter in self._waiting:
                self._waiting.remove(waiter)
            elif waiter.done() and not waiter.cancelled():
                self.give(waiter.result())
            raise

    def give(self, token: int) -> None:
        """The job of `token` has ended: the next one may start."""
        self._started.pop(token, None)
        self._next()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def _free(self) -> bool:
        now = self._loop.time()
        return all(now - started >= self.lease for started in self._started.values())

    def _grant(self) -> int:
        token = next(self._tokens)
        self._started[token] = self._loop.time()
        return token

    def _next(self) -> None:
        while self._waiting and self._free():
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(self._grant())
        self._arm()

    def _arm(self) -> None:
        """Wake the line when the youngest job under way reaches the lease."""
        if self._timer is not None or not self._waiting or not self._started:
            return
        self._timer = self._loop.call_at(max(self._started.values()) + self.lease, self._expire)

    def _expire(self) -> None:
        self._timer = None
        self._next()
