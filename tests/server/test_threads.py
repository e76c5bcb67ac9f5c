"""Tool threads: workers are reused, yet the per-session limit, a hung call and a stop behave as
with a thread per call."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from intentd.daemon.server.threads import ToolThreads

T = TypeVar("T")


def run(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(asyncio.wait_for(main(), 10))


def test_calls_one_after_another_reuse_one_worker() -> None:
    async def main() -> tuple[set[int], int]:
        threads = ToolThreads(asyncio.get_running_loop())
        idents = {await threads.run("s-1", threading.get_ident) for _ in range(20)}
        workers = threads.workers
        threads.close(0.1)
        return idents, workers

    idents, workers = run(main)
    assert len(idents) == 1 and threading.get_ident() not in idents
    assert workers == 1


def test_a_session_never_holds_more_than_its_share() -> None:
    async def main() -> tuple[int, int, int]:
        threads = ToolThreads(asyncio.get_running_loop(), per_session=2)
        release = threading.Event()
        running = [0]
        peak = [0]
        lock = threading.Lock()

        def hold() -> None:
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            release.wait(5)
            with lock:
                running[0] -= 1

        held = [asyncio.ensure_future(threads.run("greedy", hold)) for _ in range(5)]
        await asyncio.sleep(0.3)
        under_way = running[0]
        other = await threads.run("other", lambda: 7)  # another session is not held up
        release.set()
        await asyncio.gather(*held)
        threads.close(1)
        return under_way, peak[0], other

    under_way, peak, other = run(main)
    assert under_way == 2 and peak == 2
    assert other == 7


def test_a_hung_call_keeps_its_worker_and_the_next_call_gets_another() -> None:
    async def main() -> tuple[int, int, int]:
        threads = ToolThreads(asyncio.get_running_loop())
        stuck = threading.Event()
        hung = asyncio.ensure_future(threads.run("s-1", stuck.wait, 5))
        await asyncio.sleep(0.05)
        hung_ident = next(t.ident for t in threading.enumerate() if t.name == "intentd-tool-s-1")
        other_ident = await asyncio.wait_for(threads.run("s-2", threading.get_ident), 2)
        still = threads.close(0.2)  # the hung call is counted, not waited for past the grace
        stuck.set()
        await hung
        return hung_ident or 0, other_ident, still

    hung_ident, other_ident, still = run(main)
    assert other_ident != hung_ident
    assert still == 1


def test_an_error_reaches_the_caller_and_the_worker_stays_usable() -> None:
    async def main() -> tuple[str, int]:
        threads = ToolThreads(asyncio.get_running_loop())

        def fail() -> None:
            raise ValueError("boom")

        try:
            await threads.run("s-1", fail)
            caught = ""
        except ValueError as exc:
            caught = str(exc)
        value = await threads.run("s-1", lambda: 3)
        threads.close(0.1)
        return caught, value

    assert run(main) == ("boom", 3)


def test_an_idle_worker_ends_after_its_idle_time() -> None:
    async def main() -> tuple[int, int]:
        threads = ToolThreads(asyncio.get_running_loop(), idle_seconds=0.05)
        await threads.run("s-1", lambda: None)
        before = threads.workers
        for _ in range(100):
            if threads.workers == 0:
                break
            await asyncio.sleep(0.01)
        after = threads.workers
        await threads.run("s-1", lambda: None)  # a new worker is started when none is left
        threads.close(0.1)
        return before, after

    assert run(main) == (1, 0)


def test_jobs_take_turns_one_at_a_time() -> None:
    # Threads running Python at once hand the interpreter lock back and forth at every system
    # call; short jobs run one after another instead.
    async def main() -> int:
        threads = ToolThreads(asyncio.get_running_loop())
        threads.turns.lease = 60  # a busy machine may pause a job past the real lease
        running, peak, lock = [0], [0], threading.Lock()

        def job() -> None:
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            threading.Event().wait(0.002)
            with lock:
                running[0] -= 1

        await asyncio.gather(*(threads.run(f"s-{n % 4}", job) for n in range(40)))
        threads.close(0.1)
        return peak[0]

    assert run(main) == 1


def test_a_job_past_its_lease_holds_no_one_back() -> None:
    async def main() -> tuple[bool, int]:
        threads = ToolThreads(asyncio.get_running_loop())
        threads.turns.lease = 0.05
        stuck = threading.Event()
        hung = asyncio.ensure_future(threads.run("s-1", stuck.wait, 8))
        answers = await asyncio.wait_for(
            asyncio.gather(*(threads.run(f"s-{n}", lambda n=n: n) for n in range(2, 6))), 5)
        still_stuck = not hung.done()
        stuck.set()
        await hung
        threads.close(0.1)
        return still_stuck, sum(answers)

    assert run(main) == (True, 2 + 3 + 4 + 5)


def test_a_call_cancelled_while_waiting_for_its_turn_leaves_none_behind() -> None:
    async def main() -> tuple[int, int]:
        threads = ToolThreads(asyncio.get_running_loop())
        threads.turns.lease = 60  # only an ended job frees the turn here
        release = threading.Event()
        first = asyncio.ensure_future(threads.run("s-1", release.wait, 5))
        await asyncio.sleep(0.05)
        waiting = asyncio.ensure_future(threads.run("s-2", lambda: 1))
        await asyncio.sleep(0.05)
        queued = threads.turns.waiting
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        release.set()
        await first
        value = await asyncio.wait_for(threads.run("s-3", lambda: 2), 2)
        threads.close(0.1)
        return queued, value

    assert run(main) == (1, 2)


def test_the_loop_stands_still_for_a_brief_job_for_a_moment_at_most() -> None:
    # While it waits, the loop runs nothing, so the worker need not trade the interpreter lock
    # with it; a brief job that runs on past the wait no longer holds the loop.
    async def main() -> tuple[float, float, float, float, int]:
        loop = asyncio.get_running_loop()
        threads = ToolThreads(loop, brief_wait=5)  # far longer than the short job, on any machine
        ended: list[float] = []
        loop_ran: list[float] = []

        def job(seconds: float, value: int) -> int:
            time.sleep(seconds)
            ended.append(time.monotonic())
            return value

        loop.call_soon(lambda: loop_ran.append(time.monotonic()))
        short = await threads.run("s-1", job, 0.05, 1, brief=True)
        await asyncio.sleep(0)
        short_ended, short_loop = ended.pop(), loop_ran.pop()

        threads.brief_wait = 0.05
        started = time.monotonic()
        loop.call_soon(lambda: loop_ran.append(time.monotonic()))
        long_value = await threads.run("s-1", job, 1.0, 2, brief=True)
        threads.close(0.1)
        return short_loop, short_ended, loop_ran[0] - started, ended[0] - started, short + long_value

    short_loop, short_ended, loop_back, long_ended, values = run(main)
    assert short_loop >= short_ended  # the loop ran nothing until the short job had ended
    assert loop_back < 0.6 < long_ended  # the long one held the loop its wait, not its second
    assert values == 3


def test_a_brief_job_hands_back_its_error_and_what_it_held() -> None:
    async def main() -> tuple[str, int, int]:
        threads = ToolThreads(asyncio.get_running_loop())

        def fail() -> None:
            raise ValueError("boom")

        try:
            await threads.run("s-1", fail, brief=True)
            caught = ""
        except ValueError as exc:
            caught = str(exc)
        value = await threads.run("s-1", lambda: 3, brief=True)
        held = len(threads.turns._started) + len(threads._sessions)
        threads.close(0.1)
        return caught, value, held

    assert run(main) == ("boom", 3, 0)


def test_brief_jobs_ending_about_when_the_wait_does_are_each_answered_once() -> None:
    # Each result goes either straight to the waiting loop or, once it stopped waiting, through
    # the loop's queue: never both, never neither, whichever comes first.
    async def main() -> tuple[list[int], int]:
        threads = ToolThreads(asyncio.get_running_loop(), brief_wait=0.001)
        pauses = random.Random(7)

        def job(n: int, pause: float) -> int:
            time.sleep(pause)
            return n

        answers = [await threads.run(f"s-{n % 3}", job, n, pauses.uniform(0, 0.002), brief=True)
                   for n in range(300)]
        held = len(threads.turns._started) + len(threads._sessions)
        threads.close(0.1)
        return answers, held

    answers, held = run(main)
    assert answers == list(range(300))
    assert held == 0
