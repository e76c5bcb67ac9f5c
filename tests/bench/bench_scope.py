"""Benchmark: deciding a write against an intent of 10 and of 10,000 scope patterns, in one run.

Run: python tests/bench/bench_scope.py [--calls 2000]
Prints, for each size, the time to load the intents file, the time one write decision takes
through the whole pipeline, and the same scope matched by pathspec's GitIgnoreSpec (the
matcher intentd used before), as the anchor. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pathspec

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import decide, make_intent, make_workspace


def scope_lines(count: int) -> list[str]:
    """A large real-looking scope: folders, single files, globs, extensions and exclusions."""
    kinds = (lambda i: f"services/svc{i}/**", lambda i: f"docs/guide/page{i}.md",
             lambda i: f"**/*.gen{i}", lambda i: f"!services/svc{i}/secrets/",
             lambda i: f"packages/pkg{i}/src/*.py", lambda i: f"fixture{i}")
    return [kinds[i % len(kinds)](i) for i in range(count)]


def write_paths(count: int) -> list[str]:
    out = []
    for i in range(200):
        n = (i * 7919) % max(count, 1)
        out += [f"services/svc{n - n % 6}/api/handler{i}.py", f"docs/guide/page{i}.md",
                f"packages/pkg{n - n % 6 + 4}/src/m{i}.py", f"elsewhere/f{i}.txt"]
    return out


def measure(count: int, calls: int) -> dict[str, float]:
    lines = scope_lines(count)
    paths = write_paths(count)
    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(Path(tmp) / "ws", make_intent("BIG", owned_scope=lines))
        engine = Engine(Path(tmp) / "state", record=False, checkpoints=False)
        started = time.perf_counter()
        session = engine.open_session(root, agent="bench")
        load_ms = (time.perf_counter() - started) * 1000
        decide(engine, session, "select_active_intent", intent_id="BIG")
        samples = []
        for i in range(calls):
            clock = time.perf_counter()
            decide(engine, session, "write_to_file", path=paths[i % len(paths)], content="x")
            samples.append((time.perf_counter() - clock) * 1e6)
        engine.close()
    spec = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
    clock = time.perf_counter()
    anchor_calls = max(20, calls // (1 + count // 100))
    for i in range(anchor_calls):
        spec.match_file(paths[i % len(paths)])
    anchor_us = (time.perf_counter() - clock) / anchor_calls * 1e6
    return {"load_ms": load_ms, "p50_us": statistics.median(samples),
            "p99_us": statistics.quantiles(samples, n=100)[98], "anchor_us": anchor_us}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    small, large = measure(10, args.calls), measure(10_000, args.calls)
    print("scope patterns | load intents | decide p50 | decide p99 | pathspec match alone")
    for count, row in ((10, small), (10_000, large)):
        print(f"{count:>14,} | {row['load_ms']:9.1f} ms | {row['p50_us']:7.0f} µs | "
              f"{row['p99_us']:7.0f} µs | {row['anchor_us']:9.0f} µs")
    print(f"10,000 / 10 patterns: decide p50 {large['p50_us'] / small['p50_us']:.2f}x; "
          f"pathspec alone {large['anchor_us'] / small['anchor_us']:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
