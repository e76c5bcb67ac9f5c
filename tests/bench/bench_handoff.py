"""Benchmark: a call that needs a person, with no approver connected, to Claude Code's own prompt.

Run: python tests/bench/bench_handoff.py
Starts a real daemon and runs `intentd hook claude-code` as Claude Code does (a new process
per tool call, JSON on stdin). Prints, for a write that needs a person:
- the daemon's part: `tools/authorize` with native_prompt answered "ask" (socket round trip,
  checkpoint included), and
- the whole hook process, from its start to its "ask" answer on stdout: what Claude Code waits
  for before it shows its prompt;
next to an auto-approved read through the same hook, for the ratio. Asserts nothing about time.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace

ROUNDS = 40
SESSION = "bench-handoff-0001"


CPU_MS: dict[str, list[float]] = {"ask": [], "allow": [], "bare": []}


def children_cpu_ms() -> float:
    """CPU time (user + system) of the finished child processes: unlike the wall clock, it does
    not grow when other work shares the machine's cores."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def hook(socket_path: Path, ws: Path, env: dict[str, str], name: str, tool: str,
         tool_input: dict[str, Any], use_id: str, kind: str = "") -> tuple[dict[str, Any], float]:
    payload = {"session_id": SESSION, "cwd": str(ws), "hook_event_name": name,
               "tool_name": tool, "tool_input": tool_input, "tool_use_id": use_id,
               "permission_mode": "default", "transcript_path": "/dev/null"}
    started, cpu = time.perf_counter(), children_cpu_ms()
    done = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "hook", "claude-code",
                           "--socket", str(socket_path)], input=json.dumps(payload), text=True,
                          capture_output=True, env=env, check=True)
    took = (time.perf_counter() - started) * 1000
    if kind:
        CPU_MS[kind].append(children_cpu_ms() - cpu)
    return (json.loads(done.stdout) if done.stdout.strip() else {}), took


def timed(argv: list[str], env: dict[str, str]) -> float:
    started, cpu = time.perf_counter(), children_cpu_ms()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    CPU_MS["bare"].append(children_cpu_ms() - cpu)
    return (time.perf_counter() - started) * 1000


def decision_of(answer: dict[str, Any]) -> str:
    return str(answer["hookSpecificOutput"]["permissionDecision"])


def daemon_part(socket_path: Path, ws: Path) -> list[float]:
    samples = []
    with Client(socket_path) as client:
        client.initialize("bench")
        session_id = client.call(protocol.SESSIONS_OPEN, {"workspace": str(ws)})["session_id"]
        client.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
        for n in range(ROUNDS * 5):
            started = time.perf_counter()
            answer = client.call(protocol.TOOLS_AUTHORIZE, {
                "session_id": session_id, "tool": "write_to_file", "native_prompt": True,
                "args": {"path": f"src/d{n}.py", "content": "x\n"}})
            samples.append((time.perf_counter() - started) * 1000)
            assert answer["decision"] == "ask", answer
    return samples


def show(label: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(f"{label:58} median {statistics.median(samples):7.1f} ms   p95 {p95:7.1f} ms")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="itd-", dir="/tmp") as tmp:
        root = Path(tmp)
        ws = make_workspace(root / "ws", policy={"auto_approve": {"read": True, "edit": False}},
                            files={"src/app.py": "x = 1\n"})
        env = {**os.environ, "XDG_STATE_HOME": str(root / "state"), "CLAUDE_PROJECT_DIR": str(ws)}
        with DaemonProcess(root / "d.sock", root / "state") as daemon:
            sock = daemon.socket_path
            first, _ = hook(sock, ws, env, "PreToolUse", "Bash",
                            {"command": "intentd hook select INT-1"}, "toolu_sel")
            assert decision_of(first) == "allow", first
            asks, reads = [], []
            for n in range(ROUNDS):
                answer, took = hook(sock, ws, env, "PreToolUse", "Write",
                                    {"file_path": str(ws / f"src/w{n}.py"), "content": "x\n"},
                                    f"toolu_w{n}", "ask")
                assert decision_of(answer) == "ask", answer
                asks.append(took)
                answer, took = hook(sock, ws, env, "PreToolUse", "Read",
                                    {"file_path": str(ws / "src/app.py"), "offset": n + 1},
                                    f"toolu_r{n}", "allow")
                assert decision_of(answer) == "allow", answer
                reads.append(took)
            direct = daemon_part(sock, ws)
            bare = [timed([sys.executable, "-c", "pass"], env) for _ in range(ROUNDS)]
            session_end = {"session_id": SESSION, "hook_event_name": "SessionEnd"}
            subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "hook", "claude-code",
                            "--socket", str(sock)], input=json.dumps(session_end), text=True,
                           capture_output=True, env=env)
    print(f"no approver connected; {ROUNDS} hook runs each, {ROUNDS * 5} socket calls")
    show("daemon: tools/authorize answered \"ask\" (native prompt)", direct)
    show("hook process: write needing a person -> \"ask\" on stdout", asks)
    show("hook process: auto-approved read -> \"allow\" (for scale)", reads)
    show("bare `python -c pass` on this machine now (for scale)", bare)
    print(f"the hook's own part (ask median less bare python median): "
          f"{statistics.median(asks) - statistics.median(bare):.1f} ms")
    print(f"ratio ask/allow (medians): {statistics.median(asks) / statistics.median(reads):.2f}")
    print("CPU time of each process (user + system; independent of the machine's load):")
    show("  hook process, write -> \"ask\"", CPU_MS["ask"])
    show("  hook process, read -> \"allow\"", CPU_MS["allow"])
    show("  bare `python -c pass`", CPU_MS["bare"])


if __name__ == "__main__":
    main()
