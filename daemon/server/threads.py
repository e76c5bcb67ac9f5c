"""Threads for blocking work (tools, hooks, queries): a stuck one never blocks other sessions,
and never keeps the daemon from stopping."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from intentd.daemon.server.turns import Turns

MAX_THREADS = 64     # blocking calls under way at once, daemon-wide
PER_SESSION = 4      # of them, held by one session (the rest of its calls wait their turn)
STOP_GRACE = 1.0     # seconds that calls under way get, after the connections had theirs, at a stop
IDLE_SECONDS = 30.0  # a worker with nothing to do this long ends (a burst leaves none behind)
BRIEF_WAIT = 0.025   # seconds the loop waits, blocked, for a brief job (the turns' lease)


class Handoff:
    """A brief job's result, handed straight to the loop's thread while it still waits.
    `given_up` and `outcome` change only under ToolThreads._state: the result goes one way."""

    __slots__ = ("ready", "outcome", "given_up")

    def __init__(self) -> None:
        self.ready = threading.Lock()
        self.ready.acquire()  # released by the worker once `outcome` is set
        self.outcome: tuple[Any, BaseException | None] | None = None
        self.given_up = False


# (session key, its semaphore, its turn, the caller's future, the work, its arguments, the
# handoff when the loop waits for it)
Job = tuple[str, asyncio.Semaphore, int, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...],
            Handoff | None]


class ToolThreads:
    """Each call runs on a thread of its own while it runs: an idle worker when there is one,
    else a new one (starting a thread costs more than the rest of a small call's hand-off). A
    session holds at most PER_SESSION of them, counted until the work ends (not until its caller
    stops waiting), so one session whose calls hang cannot take the threads other sessions need;
    a hung call keeps its worker, and the next call gets another. Jobs take turns (turns.py):
    one at a time, unless the one under way has run past a short lease.

    A brief job (a file tool's gates and checkpoint, a receipt) is waited for on the loop's own
    thread, for at most `brief_wait`: meanwhile the loop runs no Python, so the worker has the
    interpreter lock to itself instead of trading it at every system call, and its answer
    needs no wake-up of the loop. A job still running then is awaited as any other, so a stuck
    one holds the loop up once, for that long."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int = MAX_THREADS,
                 per_session: int = PER_SESSION, idle_seconds: float = IDLE_SECONDS,
                 brief_wait: float = BRIEF_WAIT) -> None:
        self.loop = loop
        self.per_session = per_session
        self.idle_seconds = idle_seconds
        self.brief_wait = brief_wait
        self._all = asyncio.Semaphore(limit)
        self._sessions: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}
        # Workers waiting for a job: `_idle` of them, each promised to take one job from `_jobs`.
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._idle = 0
        self._busy = 0  # jobs under way, for close()
        self._state = threading.Condition()
        self._closed = False
        self.turns = Turns(loop)

    async def run(self, key: str, fn: Callable[..., Any], *args: Any, brief: bool = False) -> Any:
        """fn(*args) on a thread, once `key` (a session id) and the daemon have one free; with
        `brief`, the loop's thread waits for it a moment (see the class)."""
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
        try:
            turn = await self.turns.take()
        except BaseException:
            self._all.release()
            self._release_session(key, session)
            raise
        future: asyncio.Future[Any] = self.loop.create_future()
        handoff = Handoff() if brief and self.brief_wait > 0 else None
        try:
            self._submit((key, session, turn, future, fn, args, handoff))
        except BaseException:  # no thread could be started: what it held is given back
            self._give_back(key, session, turn)
            raise
        if handoff is not None:
            handoff.ready.acquire(timeout=self.brief_wait)  # the loop stands still meanwhile
            with self._state:
                outcome = handoff.outcome
                handoff.given_up = outcome is None  # the worker then answers through the loop
            if outcome is not None:
                self._give_back(key, session, turn)
                result, error = outcome
                if error is not None:
                    raise error
                return result
        return await future

    @property
    def workers(self) -> int:
        """Threads kept for the next calls (idle) plus those running one."""
        with self._state:
            return self._idle + self._busy

    def _submit(self, job: Job) -> None:
        with self._state:
            self._busy += 1
            if self._idle > 0:
                self._idle -= 1  # that worker is promised this job
                self._jobs.put(job)
                return
        try:
            threading.Thread(target=self._worker, args=(job,), name=f"intentd-tool-{job[0]}",
                             daemon=True).start()
        except BaseException:
            with self._state:
                self._busy -= 1
            raise

    def _worker(self, job: Job | None) -> None:
        while job is not None:
            key, session, turn, future, fn, args, handoff = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # handed to the caller, as run_in_executor does
                result, error = None, exc
            with self._state:  # idle before the caller hears: its next call finds this worker
                self._busy -= 1
                self._state.notify_all()
                closed = self._closed
                if not closed:
                    self._idle += 1
                if handoff is not None and not handoff.given_up:
                    handoff.outcome = (result, error)
                else:
                    handoff = None
            if handoff is not None:
                handoff.ready.release()
            else:
                try:
                    self.loop.call_soon_threadsafe(self._done, key, session, turn, future,
                                                   result, error)
                except RuntimeError:
                    pass  # the loop is closed: the daemon has stopped
            if closed:
                return
            job = self._next_job()

    def _next_job(self) -> Job | None:
        """The next job, or None when none came for idle_seconds (the worker then ends)."""
        try:
            return self._jobs.get(timeout=self.idle_seconds)
        except queue.Empty:
            pass
        with self._state:
            if self._idle > 0:  # not promised to a job: end
                self._idle -= 1
                return None
        return self._jobs.get()  # a job was promised just as the wait ran out: it is on its way

    def _done(self, key: str, session: asyncio.Semaphore, turn: int, future: asyncio.Future[Any],
              result: Any, error: BaseException | None) -> None:
        self._give_back(key, session, turn)
        if future.done():
            return  # the caller went away
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def _give_back(self, key: str, session: asyncio.Semaphore, turn: int) -> None:
        """What a job held: its turn, its place among all threads and its session's."""
        self.turns.give(turn)
        self._all.release()
        self._release_session(key, session)

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
        (daemon threads: they end with the process). Idle workers end now."""
        deadline = time.monotonic() + grace
        with self._state:
            self._closed = True
            for _ in range(self._idle):
                self._jobs.put(None)
            self._idle = 0
            while self._busy and (left := deadline - time.monotonic()) > 0:
                self._state.wait(left)
            return self._busy
