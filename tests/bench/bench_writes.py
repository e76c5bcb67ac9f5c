"""Benchmark: gated writes over the daemon's socket (authorize → write → report), latency and throughput.

Run: python tests/bench/bench_writes.py [--calls 2000] [--clients 8] [--workspaces 4] [--daemons 2]
Starts a real daemon on a temp socket; prints figures; asserts nothing about time.

A gated write is what a hook adapter does for every edit: `tools/authorize` (the gates, then a
checkpoint of the named file), the client writes the file, `tools/report` (the receipt). A read's
`tools/authorize` is measured in the same run, for the ratio.

The spread is also run with its workspaces shared out between `--daemons` daemons, alternating
with one daemon: the most that running the gates of different workspaces in processes of their
own could give on this machine, since those daemons share nothing (no routing, no shared
sessions or approvals, which a real split would have to pay for).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace

POLICY = {"auto_approve": {"edit": True, "max_consecutive": 0}}


def open_session(client: Client, workspace: Path) -> str:
    opened = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace), "agent": "bench"})
    session_id = str(opened["session_id"])
    client.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    return session_id


def gated_write(client: Client, session_id: str, workspace: Path, n: int, tag: str,
                parts: list[tuple[float, float, float]] | None = None) -> None:
    """One gated write; with `parts`, the times of its authorize, write and report are added."""
    path = f"src/{tag}-{n % 64}.py"
    content = f"value = {n}\n"
    started = time.perf_counter()
    answer = client.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session_id, "tool": "write_to_file", "args": {"path": path, "content": content}})
    if answer["decision"] != "allow":
        raise RuntimeError(answer)
    authorized = time.perf_counter()
    (workspace / path).write_text(content)
    written = time.perf_counter()
    client.call(protocol.TOOLS_REPORT, {"session_id": session_id, "call_id": answer["call_id"],
                                        "ok": True, "output": "written"})
    if parts is not None:
        parts.append((authorized - started, written - authorized, time.perf_counter() - written))


def ungated_write(client: Client, session_id: str, workspace: Path, n: int, tag: str,
                  parts: list[tuple[float, float, float]] | None = None) -> None:
    """The machine's floor for a gated write: the same two round trips and the same file
    write, with a read's authorize (the cheapest call there is) in place of each gate."""
    path = f"src/{tag}-{n % 64}.py"
    gated_read(client, session_id, n)
    (workspace / path).write_text(f"value = {n}\n")
    gated_read(client, session_id, n + 1)


def gated_read(client: Client, session_id: str, n: int) -> None:
    answer = client.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session_id, "tool": "read_file", "args": {"path": "src/app.py",
                                                                "start_line": n + 1}})
    if answer["decision"] != "allow":
        raise RuntimeError(answer)


def latency(socket_path: Path, workspace: Path, calls: int, parts: list[tuple[float, float, float]]
            ) -> tuple[list[float], list[float], list[float]]:
    writes, reads, floor = [], [], []
    with Client(socket_path) as client:
        session_id = open_session(client, workspace)
        for n in range(200):  # warm up
            gated_write(client, session_id, workspace, n, "warm")
            gated_read(client, session_id, n)
        for n in range(calls):
            started = time.perf_counter()
            gated_write(client, session_id, workspace, n, "lat", parts)
            writes.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            gated_read(client, session_id, n + 1000)
            reads.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            ungated_write(client, session_id, workspace, n, "floor")
            floor.append((time.perf_counter() - started) * 1000)
    return writes, reads, floor


def worker(socket_path: str, workspace: str, tag: str, calls: int, start: Any, done: Any,
           ungated: bool = False) -> None:
    write = ungated_write if ungated else gated_write
    try:
        with Client(socket_path) as client:
            session_id = open_session(client, Path(workspace))
            for n in range(20):
                write(client, session_id, Path(workspace), n, tag + "w")
            start.wait()
            samples = []
            began = time.perf_counter()
            for n in range(calls):
                t = time.perf_counter()
                write(client, session_id, Path(workspace), n, tag)
                samples.append((time.perf_counter() - t) * 1000)
        done.put((began, time.perf_counter(), samples))
    except Exception as exc:  # noqa: BLE001 - reported by the parent
        done.put(f"{tag}: {exc}")


def daemon_usage(pid: int) -> tuple[float, int]:
    """The daemon's CPU seconds so far (user + system, all threads) and its threads' voluntary
    context switches: each is a wait, often for the interpreter lock."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        switches += sum(int(line.split()[1]) for line in status.splitlines()
                        if line.startswith("voluntary_ctxt_switches"))
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), switches


def throughput(sockets: list[Path], workspaces: list[Path], clients: int,
               calls: int, phase: str, ungated: bool = False,
               usage: list[tuple[float, float]] | None = None,
               pid: int = 0) -> tuple[float, list[float]]:
    """Writes per second and their latencies; client i writes in workspace i mod W, through
    the daemon at `sockets[that workspace's number mod len(sockets)]`. With `usage`, the
    daemon's CPU ms and context switches per write are appended to it."""
    start = multiprocessing.Event()
    done: multiprocessing.Queue[Any] = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=worker, args=(
        str(sockets[i % len(workspaces) % len(sockets)]), str(workspaces[i % len(workspaces)]),
        f"{phase}{i}", calls, start, done, ungated))
        for i in range(clients)]
    for proc in procs:
        proc.start()
    time.sleep(1.5)  # every client connected, its session open, before the clock starts
    before = daemon_usage(pid) if usage is not None else (0.0, 0)
    start.set()
    spans = [done.get(timeout=600) for _ in procs]
    if usage is not None:
        after = daemon_usage(pid)
        total = clients * calls
        usage.append(((after[0] - before[0]) * 1000 / total, (after[1] - before[1]) / total))
    for proc in procs:
        proc.join()
    if any(isinstance(span, str) for span in spans):
        raise RuntimeError([span for span in spans if isinstance(span, str)])
    wall = max(end for _, end, _ in spans) - min(began for began, _, _ in spans)
    return clients * calls / wall, sorted(s for _, _, samples in spans for s in samples)


def pick(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[int(q * (len(ordered) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="sequential gated writes")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workspaces", type=int, default=4)
    parser.add_argument("--per-client", type=int, default=500)
    parser.add_argument("--daemons", type=int, default=2,
                        help="daemons the workspaces are shared out between, for the bound")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="itd-", dir="/tmp") as tmp:
        root = Path(tmp)

        def workspaces(name: str) -> list[Path]:
            return [make_workspace(root / f"{name}{i}", make_intent(owned_scope=["**"]),
                                   policy=POLICY, files={"src/app.py": "print('hi')\n" * 10})
                    for i in range(args.workspaces)]

        spaces, split_spaces = workspaces("ws"), workspaces("split")
        with contextlib.ExitStack() as stack:
            daemon = stack.enter_context(DaemonProcess(root / "d.sock", root / "state"))
            split = [stack.enter_context(DaemonProcess(root / f"d{k}.sock", root / f"state{k}"))
                     for k in range(args.daemons)]
            one_socket = [daemon.socket_path]
            parts: list[tuple[float, float, float]] = []
            writes, reads, floor = latency(daemon.socket_path, spaces[0], args.calls, parts)
            assert daemon.process is not None
            pid = daemon.process.pid
            usage: list[tuple[float, float]] = []
            one_rate, one = throughput(one_socket, spaces[:1], args.clients, args.per_client,
                                       "one")
            rate, spread = throughput(one_socket, spaces, args.clients, args.per_client,
                                      "spread", usage=usage, pid=pid)
            floor_rate, floor_spread = throughput(one_socket, spaces, args.clients,
                                                  args.per_client, "floor", ungated=True,
                                                  usage=usage, pid=pid)
            # Alternating pairs, so that a slow stretch of the machine hits both sides.
            pairs = [(throughput(one_socket, spaces, args.clients, args.per_client, f"again{n}")[0],
                      throughput([d.socket_path for d in split], split_spaces, args.clients,
                                 args.per_client, f"split{n}")[0])
                     for n in range(2)]
    print(f"gated write (authorize → write → report), {args.calls} sequential, 1 client:")
    print(f"  p50 {pick(writes, .5):.3f} ms   p90 {pick(writes, .9):.3f} ms   "
          f"p99 {pick(writes, .99):.3f} ms   mean {statistics.mean(writes):.3f} ms")
    print("  of which, p50: " + "   ".join(
        f"{name} {pick([p[i] * 1000 for p in parts], .5):.3f} ms"
        for i, name in enumerate(("authorize", "the client's write", "report"))))
    print(f"read authorize, same run: p50 {pick(reads, .5):.3f} ms "
          f"(a write costs {pick(writes, .5) / pick(reads, .5):.1f}× a read)")
    print(f"floor, same run (a read's authorize in place of each gate, same file write): "
          f"p50 {pick(floor, .5):.3f} ms; the gates add {pick(writes, .5) - pick(floor, .5):.3f} ms")
    for label, value, samples in (("1 workspace", one_rate, one),
                                  (f"{args.workspaces} workspaces", rate, spread),
                                  (f"{args.workspaces} workspaces, floor", floor_rate,
                                   floor_spread)):
        print(f"{args.clients} clients × {args.per_client} writes over {label}: {value:,.0f} writes/s"
              f"   p50 {pick(samples, .5):.2f} ms   p99 {pick(samples, .99):.2f} ms")
    (cpu, switches), (floor_cpu, floor_switches) = usage
    print(f"the daemon, per write over {args.workspaces} workspaces: {cpu:.2f} ms of CPU and "
          f"{switches:.0f} context switches (floor: {floor_cpu:.2f} ms, {floor_switches:.0f})")
    print(f"the spread again, its {args.workspaces} workspaces shared out between {args.daemons} "
          "daemons (the bound of gates in processes of their own), alternating with one daemon: "
          + "; ".join(f"{split_rate:,.0f} vs {one_again:,.0f} writes/s ({split_rate / one_again:.2f}×)"
                      for one_again, split_rate in pairs))
    print("targets: p50 ≤ 0.8 ms; ≥ 1,500 writes/s with 8 clients over 4 workspaces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
