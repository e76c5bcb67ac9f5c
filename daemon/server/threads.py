"""Threads for blocking work (tools, hooks, queries): a stuck one never blocks other sessions,
and never keeps the daemon from stopping."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

MAX_THREADS = 64     # blocking calls under way at once, daemon-wide
PER_SESSION = 4      # of them, held by one session (the rest of its calls wait their turn)
STOP_GRACE = 1.0     # seconds that calls under way get, after the connections had theirs, at a stop


class ToolThreads:
    """Each call runs on a daemon thread of its own. A session holds at most PER_SESSION of
    them, counted until the thread ends (not until its caller stops waiting), so one session
    whose calls hang cannot take the threads other sessions need."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int = MAX_THREADS,
                 per_session: int = PER_SESSION) -> None:
        self.loop = loop
        self.per_session = per_session
        self._all = asyncio.Semaphore(limit)
        self._sessions: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}
        self._running: set[threading.Thread] = set()

    async def run(self, key: str, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) on a thread, once `key` (a session id) and the daemon have one free."""
        session = self._session(key)
        try:
            await session.acquire()
        except BaseException:  # cancelled while waiting: it held nothing
            self._forget(key)
            raise
        try:
            await self._all.acquire()
        except BaseException:
            self._release_session(key, session)
            raise
        future: asyncio.Future[Any] = self.loop.create_future()
        thread = threading.Thread(target=self._work, args=(key, session, future, fn, args),
                                  name=f"intentd-tool-{key}", daemon=True)
        self._running.add(thread)
        thread.start()
        return await future

    def _work(self, key: str, session: asyncio.Semaphore, future: asyncio.Future[Any],
              fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            result, error = fn(*args), None
        except BaseException as exc:  # handed to the caller, as run_in_executor does
            result, error = None, exc
        try:
            self.loop.call_soon_threadsafe(self._done, key, session, future, result, error,
                                           threading.current_thread())
        except RuntimeError:
            pass  # the loop is closed: the daemon has stopped

    def _done(self, key: str, session: asyncio.Semaphore, future: asyncio.Future[Any],
              result: Any, error: BaseException | None, thread: threading.Thread) -> None:
        self._running.discard(thread)
        self._all.release()
        self._release_session(key, session)
        if future.done():
            return  # the caller went away
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def _session(self, key: str) -> asyncio.Semaphore:
        entry = self._sessions.get(key)
        if entry is None:
            entry = self._sessions[key] = (asyncio.Semaphore(self.per_session), [0])
        entry[1][0] += 1
        return entry[0]

    def _release_session(self, key: str, session: asyncio.Semaphore) -> None:
        session.release()
        self._forget(key)

    def _forget(self, key: str) -> None:
        entry = self._sessions.get(key)
        if entry is not None:
            entry[1][0] -= 1
            if entry[1][0] == 0:
                del self._sessions[key]

    def close(self, grace: float = STOP_GRACE) -> int:
        """Give calls under way `grace` seconds to finish; the count of those still running
        (daemon threads: they end with the process)."""
        deadline = time.monotonic() + grace
        for thread in list(self._running):
            thread.join(max(0.0, deadline - time.monotonic()))
        return sum(thread.is_alive() for thread in self._running)
