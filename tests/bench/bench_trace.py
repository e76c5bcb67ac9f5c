"""Benchmark: the ledger's hash chain, `ledger verify`, `intentd blame`, and OpenTelemetry's cost.

Run: python tests/bench/bench_trace.py [--lines 1000000]
Prints figures; asserts nothing about time. Ratios are compared within one run.
  - append: Ledger.append (chained) against the append as it was before the chain (json.dumps
    per line, a second fstat); the chain's own cost is the sha256 and the link, ~3 µs
  - verify: walking the chain of a ledger of --lines lines (rotated files included)
  - blame: a 5,000-line file after 2,000 recorded edits (and 100 edits by hand between them)
  - otel: tools/authorize (and tools/report, where the span is made) p50, export on and off
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.engine.ledger import Ledger
from intentd.daemon.testing import DaemonProcess, make_workspace
from intentd.daemon.trace.blame import blame
from intentd.daemon.trace.chain import verify
from intentd.daemon.trace.contents import ContentStore
from intentd.daemon.trace.writes import WriteTracer

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.trace.otlp_receiver import OtlpReceiver  # noqa: E402


def receipt(n: int) -> dict[str, Any]:
    """A ledger entry shaped like the engine's (about 900 bytes)."""
    when = "2026-01-01T00:00:00.000+00:00"
    return {"v": 1, "intent": {"id": f"c-{n}", "time": when, "session": "s-1", "agent": "bench",
                               "mode": "act", "workspace": "/w/project", "intent_id": "INT-1",
                               "tool": "write_to_file", "args": {"path": f"src/f{n}.py",
                                                                 "content": "x" * 120},
                               "args_sha256": "ab" * 32},
            "decision": "allow", "stage": "approval", "reason": "edits inside the intent's scope",
            "approved_by": "auto",
            "receipt": {"result": "success", "output_sha256": "cd" * 32, "data": {},
                        "files_before": {f"/w/project/src/f{n}.py": "ef" * 32},
                        "files_after": {f"/w/project/src/f{n}.py": "01" * 32},
                        "checkpoint_id": f"cp-{n:06d}", "checkpoint_coverage": "",
                        "timing": {"started_at": when, "decided_ms": 0.2, "execution_ms": 0.4},
                        "host": "bench"}}


def unchained_append(ledger: Ledger, entry: dict[str, Any]) -> None:
    """Ledger.append as it was before the chain: the same lock, checks and write, no link.
    Kept as it was (json.dumps per line, an fstat of its own) so the figure compares today's
    append with that one."""
    line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode(
        "utf-8", "backslashreplace")
    with ledger._locked():
        ledger._follow_rotation()
        end = os.fstat(ledger._fd).st_size
        written = os.write(ledger._fd, line)
        if written != len(line):
            raise OSError("short write")
        if end + len(line) >= ledger.rotate_bytes:
            ledger._rotate()


def bench_append(folder: Path, count: int = 20_000, rounds: int = 9) -> None:
    entries = [receipt(n) for n in range(count)]
    per: dict[str, list[float]] = {"without the chain": [], "with the chain": []}
    for r in range(rounds):
        for name in (list(per) if r % 2 else list(per)[::-1]):  # each goes first in turn
            ledger = Ledger(folder / f"{r}-{name[:4]}" / "ledger.jsonl")
            append = ledger.append if name == "with the chain" else (
                lambda e, ledger=ledger: unchained_append(ledger, e))
            # CPU time of this process (system calls included): other work on the machine
            # moves wall-clock time far more than the chain does
            clock = time.process_time()
            for entry in entries:
                append(entry)
            per[name].append((time.process_time() - clock) / count * 1e6)
            ledger.close()
    plain, chained = (min(v) for v in per.values())
    print(f"ledger append ({count} entries of ~900 bytes, CPU time, best of {rounds} rounds):")
    print(f"  without the chain  {plain:7.2f} µs")
    print(f"  with the chain     {chained:7.2f} µs   ({(chained / plain - 1) * 100:+.1f}%)")


def bench_verify(folder: Path, lines: int) -> None:
    path = folder / "big" / "ledger.jsonl"
    ledger = Ledger(path)
    entry = receipt(0)
    for n in range(lines):
        entry["intent"]["id"] = f"c-{n}"
        ledger.append(entry)
    ledger.close()
    size = sum(p.stat().st_size for p in path.parent.glob("ledger*.jsonl"))
    clock = time.perf_counter()
    report = verify(path)
    took = time.perf_counter() - clock
    assert report.ok and report.chained == lines, report
    print(f"ledger verify: {lines:,} lines, {size / 1e6:,.0f} MB in "
          f"{len(list(path.parent.glob('ledger*.jsonl')))} files: {took:.2f} s")


def bench_blame(folder: Path, lines: int = 5_000, edits: int = 2_000, by_hand: int = 100) -> None:
    root = folder / "blame"
    target = root / "big.py"
    target.parent.mkdir(parents=True)
    text = [f"line {n} = {n * 7}\n" for n in range(lines)]
    target.write_text("".join(text))
    ledger = Ledger(root / "state" / "ledger.jsonl")
    tracer = WriteTracer(root, ContentStore(root / "state" / "contents"))
    rng = random.Random(7)
    hand_at = set(rng.sample(range(edits), by_hand))
    for n in range(edits):
        if n in hand_at:  # a person's edit between two calls
            text[rng.randrange(len(text))] = f"by hand {n}\n"
            target.write_text("".join(text))
        before = tracer.before([str(target)])
        at = rng.randrange(len(text))
        if n % 3 == 0:
            text[at:at] = [f"added {n}.{k}\n" for k in range(rng.randint(1, 3))]
        elif n % 3 == 1 and len(text) > lines // 2:
            text[at:at + 1] = [f"changed {n}\n"]
        else:
            del text[at:at + 1]
        target.write_text("".join(text))
        after = {str(target): tracer.store.keep(str(target))}
        entry = receipt(n)
        entry["receipt"]["files_before"], entry["receipt"]["files_after"] = before, after
        entry["receipt"]["lines"] = tracer.after(before, after)
        ledger.append(entry)
    ledger.close()
    times = []
    for _ in range(5):
        clock = time.perf_counter()
        found = blame(root / "state" / "ledger.jsonl", tracer.store, target)
        times.append(time.perf_counter() - clock)
    agents = sum(1 for line in found if line.author is not None)
    print(f"intentd blame: {len(found):,}-line file, {edits:,} recorded edits, {by_hand} edits "
          f"by hand between them: {statistics.median(times) * 1000:.0f} ms "
          f"(median of 5; {agents:,} lines by agents)")


def authorize_p50(socket_path: Path, workspace: Path, calls: int) -> tuple[float, float]:
    authorize, report = [], []
    with Client(socket_path) as client:
        client.initialize("bench")
        session = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace),
                                                       "agent": "bench"})["session_id"]
        for n in range(calls):
            clock = time.perf_counter()
            answer = client.call(protocol.TOOLS_AUTHORIZE, {
                "session_id": session, "tool": "read_file",
                "args": {"path": "src/app.py", "start_line": n + 1}})
            authorize.append(time.perf_counter() - clock)
            clock = time.perf_counter()
            client.call(protocol.TOOLS_REPORT, {"session_id": session,
                                                "call_id": answer["call_id"], "ok": True})
            report.append(time.perf_counter() - clock)
    return statistics.median(authorize) * 1e6, statistics.median(report) * 1e6


def _receive(ready: Any, stop: Any) -> None:
    """The OTLP receiver, in a process of its own: its decoding must not slow the client."""
    with OtlpReceiver() as receiver:
        ready.put(receiver.endpoint)
        stop.get()
        ready.put(len(receiver.spans))


def bench_otel(folder: Path, calls: int = 3_000, rounds: int = 5) -> None:
    workspace = make_workspace(folder / "ws", files={"src/app.py": "x = 1\n"})
    results: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
    ready, stop = multiprocessing.Queue(), multiprocessing.Queue()
    receiver = multiprocessing.Process(target=_receive, args=(ready, stop), daemon=True)
    receiver.start()
    endpoint = ready.get(timeout=30)
    for r in range(rounds):
        for mode in results:
            env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint} if mode == "on" else {}
            short = Path(tempfile.mkdtemp(prefix="itd-", dir="/tmp"))
            with DaemonProcess(short / "d.sock", folder / f"state-{mode}-{r}",
                               extra_env=env) as daemon:
                results[mode].append(authorize_p50(daemon.socket_path, workspace, calls))
    stop.put(None)
    spans = ready.get(timeout=30)
    receiver.join(timeout=10)
    for mode, found in results.items():
        print(f"  rounds, {mode}: " + ", ".join(f"{a:.0f}/{r:.0f}" for a, r in found)
              + " µs (authorize/report p50)")
    off_a, off_r = (statistics.median(x[i] for x in results["off"]) for i in (0, 1))
    on_a, on_r = (statistics.median(x[i] for x in results["on"]) for i in (0, 1))
    print(f"OpenTelemetry ({calls} read_file calls per round, {rounds} rounds, p50; "
          f"{spans:,} spans reached the OTLP receiver, a process of its own on loopback):")
    print(f"  tools/authorize  off {off_a:6.0f} µs   on {on_a:6.0f} µs   "
          f"({(on_a / off_a - 1) * 100:+.1f}%)")
    print(f"  tools/report     off {off_r:6.0f} µs   on {on_r:6.0f} µs   "
          f"({(on_r / off_r - 1) * 100:+.1f}%)   (the call's receipt, and its span, are made here)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000, help="ledger lines to verify")
    parser.add_argument("--only", choices=["append", "verify", "blame", "otel"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if args.only in (None, "append"):
            bench_append(folder)
        if args.only in (None, "blame"):
            bench_blame(folder)
        if args.only in (None, "otel"):
            bench_otel(folder)
        if args.only in (None, "verify"):
            bench_verify(folder, args.lines)


if __name__ == "__main__":
    main()
