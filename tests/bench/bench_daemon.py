"""Benchmark: `tools/authorize` over the daemon's socket — round-trip latency and throughput.

Run: python tests/bench/bench_daemon.py
Starts a real daemon on a temp socket; prints figures; asserts nothing about time.
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace

LATENCY_CALLS = 5_000
CLIENTS = 8
CALLS_PER_CLIENT = 2_500


def session(client: Client, workspace: Path) -> str:
    opened = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace), "agent": "bench"})
    return str(opened["session_id"])


def authorize(client: Client, session_id: str, n: int) -> None:
    # Distinct arguments each time: identical calls would (rightly) trip repetition detection.
    answer = client.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session_id, "tool": "read_file",
        "args": {"path": "src/app.py", "start_line": n + 1}})
    if answer["decision"] != "allow":
        raise RuntimeError(answer)


def latency(socket_path: Path, workspace: Path) -> list[float]:
    with Client(socket_path) as client:
        session_id = session(client, workspace)
        for n in range(500):  # warm up
            authorize(client, session_id, n)
        samples = []
        for n in range(LATENCY_CALLS):
            started = time.perf_counter()
            authorize(client, session_id, n)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def worker(socket_path: str, workspace: str, start: multiprocessing.synchronize.Event,
           done: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    with Client(socket_path) as client:
        session_id = session(client, Path(workspace))
        start.wait()
        began = time.perf_counter()
        for n in range(CALLS_PER_CLIENT):
            authorize(client, session_id, n)
        done.put((began, time.perf_counter()))


def throughput(socket_path: Path, workspace: Path) -> float:
    start = multiprocessing.Event()
    done: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    procs = [multiprocessing.Process(target=worker, args=(str(socket_path), str(workspace),
                                                          start, done)) for _ in range(CLIENTS)]
    for proc in procs:
        proc.start()
    time.sleep(1.0)  # let every client connect and open its session before the clock starts
    start.set()
    spans = [done.get(timeout=300) for _ in procs]
    for proc in procs:
        proc.join()
    wall = max(end for _, end in spans) - min(began for began, _ in spans)
    return CLIENTS * CALLS_PER_CLIENT / wall


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="itd-", dir="/tmp") as tmp:
        root = Path(tmp)
        workspace = make_workspace(root / "ws", policy={"auto_approve": {"max_consecutive": 0}},
                                   files={"src/app.py": "print('hi')\n" * 10})
        with DaemonProcess(root / "d.sock", root / "state") as daemon:
            samples = latency(daemon.socket_path, workspace)
            rate = throughput(daemon.socket_path, workspace)
    samples.sort()
    pick = lambda q: samples[int(q * (len(samples) - 1))]  # noqa: E731
    print(f"tools/authorize over the Unix socket ({LATENCY_CALLS} sequential calls, 1 client)")
    print(f"  round trip p50 {pick(0.5):.3f} ms   p90 {pick(0.9):.3f} ms   "
          f"p99 {pick(0.99):.3f} ms   mean {statistics.mean(samples):.3f} ms")
    print(f"throughput with {CLIENTS} client processes × {CALLS_PER_CLIENT} calls: {rate:,.0f} calls/s")
    print("targets: p50 ≤ 0.5 ms, ≥ 5,000 calls/s with 8 clients")
    return 0


if __name__ == "__main__":
    sys.exit(main())
