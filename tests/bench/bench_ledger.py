"""Benchmark: ledger/query on a ledger of 1,000,000 lines, over the daemon's socket.

Run: python tests/bench/bench_ledger.py [--lines 1000000] [--reps 20]
Writes a ledger of realistic entries through `Ledger` (so it rotates by size as the daemon's
does), starts a real daemon, and times ledger/query: the newest 200 entries, by session, intent,
tool and time, and the next page. The anchor, in the same run, is what ledger/query did before
the index: read every line and keep the newest that match. Prints figures; asserts no timing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.engine.ledger import Ledger, read_ledger, segments
from intentd.daemon.testing import DaemonProcess, make_workspace
from intentd.daemon.utils.statedir import workspace_state_dir

START = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
TOOLS = ("read_file", "write_to_file", "replace_in_file", "execute_command", "list_files")


def entry(n: int) -> dict[str, Any]:
    """One call's entry, shaped and sized like the engine's receipts (about 700 bytes)."""
    when = datetime.fromtimestamp(START + n * 0.05, UTC).isoformat(timespec="milliseconds")
    session = "s-rare" if n % 10_000 == 0 else f"s-{n % 50:04d}"
    path = f"/home/dev/project/src/pkg{n % 40}/module{n % 300}.py"
    return {"v": 1, "intent": {"id": f"c-{n}", "time": when, "session": session, "agent": "claude",
                               "mode": "act", "workspace": "/home/dev/project",
                               "intent_id": f"INT-{n % 5}", "tool": TOOLS[n % len(TOOLS)],
                               "args": {"path": path[len("/home/dev/project/"):]},
                               "args_sha256": f"{n:064x}"},
            "decision": ("allow", "ask", "deny")[n % 3], "stage": "approval",
            "reason": "auto-approved: edit inside the workspace", "approved_by": "auto",
            "receipt": {"result": "success", "output_sha256": f"{n * 7:064x}", "data": {},
                        "files_before": {path: f"{n * 3:064x}"}, "files_after": {path: f"{n:064x}"},
                        "checkpoint_id": str(n), "timing": {"started_at": when, "decided_ms": 0.21,
                                                            "execution_ms": 1.3},
                        "host": "devbox"}}


def write_ledger(path: Path, lines: int) -> float:
    started = time.perf_counter()
    ledger = Ledger(path)
    for n in range(lines):
        ledger.append(entry(n))
    ledger.close()
    return time.perf_counter() - started


def timed(client: Client, params: dict[str, Any], reps: int) -> tuple[float, dict[str, Any]]:
    samples, result = [], {}
    for _ in range(reps):
        clock = time.perf_counter()
        result = client.call(protocol.LEDGER_QUERY, params)
        samples.append((time.perf_counter() - clock) * 1000)
    return statistics.median(samples), result


def full_scan(path: Path, limit: int) -> float:
    """The anchor: every line read and parsed, the newest `limit` kept."""
    clock = time.perf_counter()
    kept = deque((e for e in read_ledger(path, rotated=True)), maxlen=limit)
    assert len(kept) == limit
    return (time.perf_counter() - clock) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="itd-bench-", dir="/tmp") as tmp:
        base = Path(tmp)
        root = make_workspace(base / "ws").resolve()
        path = workspace_state_dir(root, base / "state" / "intentd") / "ledger.jsonl"
        wrote = write_ledger(path, args.lines)
        size = sum(p.stat().st_size for p in segments(path))
        print(f"ledger: {args.lines:,} lines, {size / 2**20:,.0f} MiB in {len(segments(path))} "
              f"files (rotated at 64 MiB), written in {wrote:.0f} s")
        with DaemonProcess(base / "d.sock", base / "state") as daemon, \
                Client(daemon.socket_path, timeout=600).connect() as client:
            client.initialize("bench")
            ws = str(root)
            clock = time.perf_counter()
            client.call(protocol.LEDGER_QUERY, {"workspace": ws, "limit": 1})
            print(f"index built on the first query: {time.perf_counter() - clock:.1f} s (once)")
            rows = [("newest 200", {"limit": 200})]
            rows.append(("session (100 in the ledger)", {"session_id": "s-rare", "limit": 200}))
            rows.append(("intent, newest 200", {"intent_id": "INT-3", "limit": 200}))
            rows.append(("tool, newest 200", {"tool": "execute_command", "limit": 200}))
            middle = datetime.fromtimestamp(START + args.lines * 0.025, UTC).isoformat()
            rows.append(("one minute mid-ledger", {"since": middle, "limit": 2000,
                                                   "until": START + args.lines * 0.025 + 60}))
            print(f"{'query':32} | p50 over the socket | entries")
            older = None
            for label, params in rows:
                ms, result = timed(client, {"workspace": ws, **params}, args.reps)
                older = older or result.get("older")
                print(f"{label:32} | {ms:12.1f} ms    | {len(result['entries'])}")
            ms, result = timed(client, {"workspace": ws, "limit": 200, "before": older}, args.reps)
            print(f"{'next page of 200':32} | {ms:12.1f} ms    | {len(result['entries'])}")
            ledger = Ledger(path)
            for n in range(args.lines, args.lines + 1000):
                ledger.append(entry(n))
            ledger.close()
            ms, _ = timed(client, {"workspace": ws, "limit": 200}, 1)
            print(f"{'newest 200 after 1,000 new lines':32} | {ms:12.1f} ms    | 200")
        anchor = full_scan(path, 200)
        print(f"anchor, the full read ledger/query did before: {anchor:,.0f} ms for the newest 200")
    return 0


if __name__ == "__main__":
    sys.exit(main())
