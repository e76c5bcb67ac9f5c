"""Benchmark: what one gated Cline tool call costs through the installed hook file, p50 and p99.

Run: python tests/bench/bench_cline_hook.py [--rounds N]
Starts a real daemon, installs intentd's hook files into a scratch workspace
(`intentd hook install cline`) and runs `PreToolUse` as Cline CLI 3 runs it (`sh FILE`, the
payload on stdin) for an auto-approved read, a different file each time (so the repetition
stage never steps in), interleaved with a bare `python -c pass`. The first call, which starts
the session's keeper, is reported apart. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from intentd.daemon.testing import DaemonProcess, make_workspace

FIXTURE = Path(__file__).parent.parent / "agents" / "cline_fixtures" / "cli" / "PreToolUse-read_files.json"


def timed(argv: list[str], stdin: str, cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd, check=True)
    return (time.perf_counter() - started) * 1000, done.stdout + done.stderr


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=100)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory(prefix="bch-", dir="/tmp") as tmp:
        base = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(base / "xdg-state")  # the session state: this run's
        files = {f"src/r{n}.py": "x = 1\n" for n in range(rounds + 1)}
        ws = make_workspace(base / "ws", files=files)
        with DaemonProcess(base / "d.sock", base / "state") as daemon:
            subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "hook", "install",
                            "cline", "--workspace", str(ws), "--socket", str(daemon.socket_path)],
                           check=True, capture_output=True)
            hook = ["sh", str(ws / ".clinerules" / "hooks" / "PreToolUse")]
            template = FIXTURE.read_text().replace("/home/me/proj", str(ws))

            def call(n: int) -> tuple[float, str]:
                payload = json.loads(template)
                payload["tool_call"]["id"] = f"call_{n}"
                payload["tool_call"]["input"] = {"files": [{"path": str(ws / f"src/r{n}.py")}]}
                return timed(hook, json.dumps(payload), ws)

            first, answer = call(rounds)
            assert '"cancel": false' in answer, answer
            hooks, bare = [], []
            for n in range(rounds):
                spent, answer = call(n)
                assert '"cancel": false' in answer, answer
                hooks.append(spent)
                bare.append(timed([sys.executable, "-c", "pass"], "", ws)[0])
    print(f"cline PreToolUse hook file (sh + intentd hook cline), {rounds} reads:")
    print(f"  first call (starts the keeper): {first:.1f} ms")
    print(f"  p50 {statistics.median(hooks):.1f} ms, p99 {pct(hooks, 0.99):.1f} ms")
    print(f"  python -c pass: p50 {statistics.median(bare):.1f} ms, p99 {pct(bare, 0.99):.1f} ms")
    print(f"  overhead over a bare Python start: p50 "
          f"{statistics.median(hooks) - statistics.median(bare):.1f} ms")


if __name__ == "__main__":
    main()
