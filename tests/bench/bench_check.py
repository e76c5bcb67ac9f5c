"""Benchmark: `intentd check` decisions per second on file-tool calls, in one process.

Run: python tests/bench/bench_check.py
Prints figures; asserts nothing about time (machines are noisy).
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from intentd.daemon.check import decide_lines
from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import make_call, make_intent, make_workspace

CALLS = 50_000


def workload(n: int) -> list[str]:
    """A realistic mix: reads, in-scope and out-of-scope writes, edits, listings, bad calls."""
    lines = [json.dumps(make_call("select_active_intent", intent_id="APP"))]
    for i in range(n - 1):
        kind = i % 8
        path = f"src/pkg{i % 50}/mod{i % 200}.py"
        if kind in (0, 1, 2):
            call = make_call("read_file", path=path, start_line=1 + i % 7)
        elif kind == 3:
            call = make_call("write_to_file", path=f"src/new/f{i}.py", content="x = 1\n")
        elif kind == 4:
            call = make_call("write_to_file", path=f"docs/f{i}.md", content="# no\n")
        elif kind == 5:
            call = make_call("replace_in_file", path=path, old_str="a", new_str=f"b{i}")
        elif kind == 6:
            call = make_call("list_files", path=f"src/pkg{i % 50}")
        else:
            call = make_call("read_file", path=f"../outside{i}.txt")
        lines.append(json.dumps(call))
    return lines


def run_once(root: Path, lines: list[str]) -> tuple[float, dict[str, int]]:
    engine = Engine(record=False, checkpoints=False)
    session = engine.open_session(root, agent="bench")
    verdicts: dict[str, int] = {}
    started = time.perf_counter()
    for out in decide_lines(engine, session, lines):
        verdict = json.loads(out)["decision"]
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    elapsed = time.perf_counter() - started
    engine.close()
    return elapsed, verdicts


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        files = {f"src/pkg{p}/mod{m}.py": "a = 1\n" for p in range(50) for m in range(200)
                 if m % 50 == p}
        root = make_workspace(Path(tmp) / "ws", make_intent("APP", owned_scope=["src/**"]),
                              policy={"auto_approve": {"max_consecutive": 0}}, files=files)
        lines = workload(CALLS)
        runs = [run_once(root, lines) for _ in range(3)]
    rates = [CALLS / elapsed for elapsed, _ in runs]
    print(f"intentd check: {CALLS} file-tool calls, 3 runs in one process")
    print(f"  decisions/s  median {statistics.median(rates):,.0f}   "
          f"min {min(rates):,.0f}   max {max(rates):,.0f}")
    print(f"  per decision {1e6 / statistics.median(rates):.1f} µs   verdicts {runs[0][1]}")
    print("  target: ≥ 20,000 decisions/s")
    return 0


if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    sys.exit(main())
