"""Benchmark: what one gated Claude Code tool call costs through each hook, p50 and p99.

Run: python tests/bench/bench_hooks.py [--http-rounds N] [--process-rounds N]
Starts a real daemon (its HTTP hook on a free port) and sends the PreToolUse of an
auto-approved Read, a different file each time (so the repetition stage never steps in):
- over the daemon's HTTP hook, a new connection per call as Claude Code makes it;
- through the command hook `intentd hook claude-code`, a new process per call (JSON on stdin);
- straight over the Unix socket as `tools/authorize`: the pipeline's own part, for scale;
and runs a bare `python -c pass` interleaved with the hook processes, in the same run.
Overhead = the hook's time less the socket call's at the same percentile (the pipeline's work
is the same in all). CPU time per call is printed too: load inflates it far less than the
wall clock.
Targets (issue 16): HTTP hook ≤ 2 ms, command hook ≤ 60 ms per call. Asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
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

SESSION = "bench-hooks-0001"
HTTP_TARGET_MS, PROCESS_TARGET_MS = 2.0, 60.0
WARM_UP = 50
BLOCK = 100


def payload(ws: Path, n: int, session: str = SESSION) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": "/dev/null", "cwd": str(ws),
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_input": {"file_path": str(ws / "src" / f"r{n}.py")}, "tool_use_id": f"t{n}"}


def http_call(port: int, token: str, body: bytes) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/claude-code?timeout=60", body=body, headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    answer = json.loads(conn.getresponse().read())
    conn.close()
    return (time.perf_counter() - started) * 1000, answer


CPU_MS: dict[str, list[float]] = {"hook": [], "bare": []}


def children_cpu_ms() -> float:
    """CPU time (user + system) of finished child processes: unlike the wall clock, it does
    not grow when other work shares the machine's cores."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def process_cpu_ms(pid: int) -> float:
    """CPU time of a running process (the daemon), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def process_call(argv: list[str], body: str, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    started, cpu = time.perf_counter(), children_cpu_ms()
    done = subprocess.run(argv, input=body, text=True, capture_output=True, env=env, check=True)
    took = (time.perf_counter() - started) * 1000
    CPU_MS["hook"].append(children_cpu_ms() - cpu)
    return took, json.loads(done.stdout)


def bare(env: dict[str, str]) -> float:
    started, cpu = time.perf_counter(), children_cpu_ms()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    CPU_MS["bare"].append(children_cpu_ms() - cpu)
    return (time.perf_counter() - started) * 1000


def hook_argv(socket_path: Path) -> list[str]:
    """The console script next to this Python (what `hook install` writes), else `-m`."""
    script = Path(sys.executable).parent / "intentd"
    head = [str(script)] if script.exists() else [sys.executable, "-m", "intentd.daemon.cli"]
    return [*head, "hook", "claude-code", "--socket", str(socket_path)]


class SocketCaller:
    """`tools/authorize` of the same Read over one socket connection and session."""

    def __init__(self, socket_path: Path, ws: Path) -> None:
        self.ws = ws
        self.client = Client(socket_path).connect()
        self.client.initialize("bench")
        self.session_id = self.client.call(protocol.SESSIONS_OPEN,
                                           {"workspace": str(ws)})["session_id"]

    def __call__(self, n: int) -> float:
        started = time.perf_counter()
        answer = self.client.call(protocol.TOOLS_AUTHORIZE, {
            "session_id": self.session_id, "tool": "read_file",
            "args": {"path": str(self.ws / "src" / f"r{n}.py")}})
        assert answer["decision"] == "allow", answer
        return (time.perf_counter() - started) * 1000


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def show(label: str, samples: list[float], base: list[float] | None = None,
         target: float | None = None) -> None:
    """p50 and p99; with `base` (the socket call), the overhead at each: like against like,
    since the same load falls on both."""
    p50, p99 = statistics.median(samples), pct(samples, 0.99)
    line = f"{label:46} n={len(samples):5}  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms"
    if base is not None:
        over50, over99 = p50 - statistics.median(base), p99 - pct(base, 0.99)
        line += f"  overhead p50 {over50:6.2f} / p99 {over99:6.2f} ms"
        if target is not None:
            verdict = "met" if max(over50, over99) <= target else "NOT met"
            line += f"  (target <= {target:g} ms: {verdict})"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http-rounds", type=int, default=2000)
    parser.add_argument("--process-rounds", type=int, default=100)
    args = parser.parse_args()
    total = args.http_rounds * 2 + args.process_rounds + 2 * WARM_UP + 2 * BLOCK
    with tempfile.TemporaryDirectory(prefix="itd-", dir="/tmp") as tmp:
        root = Path(tmp)
        ws = make_workspace(root / "ws", policy={"auto_approve": {"read": True}},
                            files={f"src/r{n}.py": f"r = {n}\n" for n in range(total)})
        state = root / "state"
        env = {**os.environ, "XDG_STATE_HOME": str(state), "CLAUDE_PROJECT_DIR": str(ws)}
        with DaemonProcess(root / "d.sock", state,
                           extra_env={"INTENTD_HTTP_HOOK": "0"}) as daemon:
            folder = state / "intentd" / "http-hook"
            deadline = time.monotonic() + 10
            while not (folder / "status.json").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            port = json.loads((folder / "status.json").read_text())["port"]
            token = (folder / "token").read_text().strip()
            assert daemon.process is not None
            socket_call = SocketCaller(daemon.socket_path, ws)
            n = 0
            for _ in range(WARM_UP):  # the session opened, the workspace loaded and watched
                http_call(port, token, json.dumps(payload(ws, n)).encode())
                socket_call(n + 1)
                n += 2
            time.sleep(1)
            via_http, direct = [], []
            cpu = {"http": 0.0, "socket": 0.0}
            for _ in range(0, args.http_rounds, BLOCK):  # blocks, in turn: the same load on both
                before = process_cpu_ms(daemon.process.pid)
                for _ in range(BLOCK):
                    took, answer = http_call(port, token, json.dumps(payload(ws, n)).encode())
                    assert answer["hookSpecificOutput"]["permissionDecision"] == "allow", answer
                    via_http.append(took)
                    n += 1
                middle = process_cpu_ms(daemon.process.pid)
                for _ in range(BLOCK):
                    direct.append(socket_call(n))
                    n += 1
                cpu["http"] += middle - before
                cpu["socket"] += process_cpu_ms(daemon.process.pid) - middle
            socket_call.client.close()
            http_cpu, socket_cpu = cpu["http"] / len(via_http), cpu["socket"] / len(direct)
            argv = hook_argv(daemon.socket_path)
            process_call(argv, json.dumps(payload(ws, n, "proc")), env)  # starts its keeper
            via_process, python_pass = [], []
            for _ in range(args.process_rounds):
                n += 1
                took, answer = process_call(argv, json.dumps(payload(ws, n, "proc")), env)
                assert answer["hookSpecificOutput"]["permissionDecision"] == "allow", answer
                via_process.append(took)
                python_pass.append(bare(env))
            subprocess.run(argv, input=json.dumps({"session_id": "proc",
                                                   "hook_event_name": "SessionEnd"}),
                           text=True, capture_output=True, env=env)
    print(f"PreToolUse of an auto-approved Read, each a different file; command: {argv[0]}")
    show("socket: tools/authorize (the pipeline itself)", direct)
    show("HTTP hook: new connection per call", via_http, direct, HTTP_TARGET_MS)
    show("command hook: `intentd hook claude-code`", via_process, direct, PROCESS_TARGET_MS)
    show("bare `python -c pass` (same run, interleaved)", python_pass)
    print(f"command hook less bare python (p50): "
          f"{statistics.median(via_process) - statistics.median(python_pass):.1f} ms")
    print("CPU time per call (user + system; independent of the machine's load):")
    print(f"  daemon, per HTTP hook call {http_cpu:6.2f} ms; per socket call {socket_cpu:6.2f} ms")
    print(f"  command hook process p50 {statistics.median(CPU_MS['hook']):6.1f} ms; "
          f"bare python p50 {statistics.median(CPU_MS['bare']):6.1f} ms")


if __name__ == "__main__":
    main()
