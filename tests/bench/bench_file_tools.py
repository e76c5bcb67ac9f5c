"""Benchmark: the file tools' safe paths against the plain ones they replaced, in one run.

Run: python tests/bench/bench_file_tools.py [--files 2000] [--writes 2000]
Prints figures; asserts nothing about time.

- search_files (RE2 over each file's bytes, no symlink followed) against a per-line `re` search
  of the same files, for an ordinary pattern;
- a catastrophic pattern, `(a+)+$`: `re` on one 26-character line against RE2 over the tree;
- a file write reached folder by folder with O_NOFOLLOW (`write_text`) against a plain
  temp-file-and-rename (`atomic_write`);
- the ledger line each destructive call now writes before it runs.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.ledger import Ledger
from intentd.daemon.testing import make_intent, make_session, make_workspace
from intentd.daemon.tools.fileio import atomic_write, write_text

LINE = "def handler_{i}(request, response):  # routes {i} to the service layer\n"


def per_line_re(root: Path, pattern: str) -> int:
    compiled, count = re.compile(pattern), 0
    for path in sorted(root.rglob("*.py")):
        for line in path.read_text().splitlines():
            count += bool(compiled.search(line))
    return count


def timed(fn: object, *args: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn(*args)  # type: ignore[operator]
    return time.perf_counter() - started, result


def bench_search(root: Path, engine: Engine, session: object) -> None:
    def search(pattern: str) -> str:
        ev = engine.evaluate(session, "search_files", {"regex": pattern})  # type: ignore[arg-type]
        result = engine.run(ev, "bench").result
        assert result is not None and result.ok, result
        return result.output

    for name, pattern in (("ordinary", r"handler_\d+777\("), ("no match", r"nomatch\d")):
        re_s, _ = timed(per_line_re, root, pattern)
        re2_s, _ = timed(search, pattern)
        print(f"search {name:9}: search_files {re2_s * 1000:7.1f} ms   per-line re "
              f"{re_s * 1000:7.1f} ms   ratio {re2_s / re_s:.2f}")
    line = "a" * 25 + "!"
    re_s, _ = timed(lambda: re.compile(r"(a+)+$").search(line))
    (root / "src" / "bad.py").write_text(line + "\n")
    re2_s, _ = timed(search, r"(a+)+$")
    print(f"search (a+)+$    : re on one {len(line)}-char line {re_s:.2f} s   "
          f"search_files over the whole tree {re2_s * 1000:.1f} ms")


def bench_writes(root: Path, count: int) -> None:
    folder = root / "src" / "deep" / "er"
    folder.mkdir(parents=True, exist_ok=True)
    for name, write in (("atomic_write", atomic_write), ("write_text", write_text)):
        samples = []
        for index in range(count):
            path = str(folder / f"w{index % 50}.txt")
            started = time.perf_counter()
            write(path, f"content {index}\n")
            samples.append(time.perf_counter() - started)
        print(f"write {name:13}: p50 {statistics.median(samples) * 1e6:7.1f} µs")


def bench_intent_line(state: Path, count: int) -> None:
    ledger = Ledger(state / "bench-ledger.jsonl")
    entry = {"v": 1, "phase": "intent", "intent": {"id": "c-1", "tool": "write_to_file",
                                                   "args": {"path": "src/a.py"}},
             "decision": "allow", "stage": "approval", "reason": "auto-approved edit"}
    started = time.perf_counter()
    for _ in range(count):
        ledger.append(entry)
    per = (time.perf_counter() - started) / count
    ledger.close()
    print(f"intent line      : {per * 1e6:.1f} µs per destructive call")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--writes", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {f"src/m{i // 100}/f{i}.py": "".join(LINE.format(i=i * 40 + j) for j in range(40))
                 for i in range(args.files)}
        root = make_workspace(Path(tmp) / "ws", make_intent(owned_scope=["**"]), files=files)
        size = sum(len(text) for text in files.values())
        print(f"{args.files} files, {size / 1e6:.1f} MB")
        engine = Engine(Path(tmp) / "state", checkpoints=False)
        session = make_session(engine, root)
        bench_search(root, engine, session)
        bench_writes(root, args.writes)
        bench_intent_line(Path(tmp), args.writes)
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
