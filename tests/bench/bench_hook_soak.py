"""Benchmark: four agents' command hooks, eight sessions in all, hammering one daemon.

Run: python tests/bench/bench_hook_soak.py [--seconds 60] [--sessions 8]
        [--agents claude-code,cursor,codex,gemini]
Starts a real daemon and, for each session (spread over the agents in turn), a thread that
runs the agent's real hook command (`intentd hook AGENT`, a new process per call, the JSON the
agent documents on stdin) for an auto-approved read of a different file each time, then its
post-tool report, until the time is up. Counts every call: answered (an allow in the agent's
own convention), refused (an answer, but not an allow), lost (no answer: a crash, a timeout,
output the agent could not read). Prints p50 / p99 per agent and overall (target, issue 16:
0 lost), beside a bare `python -c pass` run in a loop by one more thread during the soak (the
same machine, the same load) and the load average. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from intentd.daemon.testing import DaemonProcess, make_workspace

CALL_TIMEOUT = 90.0
FILES = 4000


def claude(ws: Path, session: str, n: int, event: str) -> dict[str, Any]:
    path = str(ws / "src" / f"f{n}.py")
    body = {"session_id": session, "transcript_path": "/dev/null", "cwd": str(ws),
            "permission_mode": "default", "hook_event_name": event, "tool_name": "Read",
            "tool_input": {"file_path": path}, "tool_use_id": f"toolu_{n}"}
    return {**body, "tool_response": {"type": "text"}} if event == "PostToolUse" else body


def cursor(ws: Path, session: str, n: int, event: str) -> dict[str, Any]:
    common = {"conversation_id": session, "generation_id": f"g{n}", "workspace_roots": [str(ws)],
              "hook_event_name": event, "cursor_version": "2.1.40"}
    return {**common, "file_path": str(ws / "src" / f"f{n}.py"), "content": "", "attachments": []}


def codex(ws: Path, session: str, n: int, event: str) -> dict[str, Any]:
    body = {"session_id": session, "transcript_path": None, "cwd": str(ws), "model": "gpt-5",
            "permission_mode": "default", "hook_event_name": event, "turn_id": f"turn-{n}",
            "tool_name": "Bash", "tool_input": {"command": f"cat src/f{n}.py"},
            "tool_use_id": f"call_{n}"}
    return {**body, "tool_response": f"x = {n}\n"} if event == "PostToolUse" else body


def gemini(ws: Path, session: str, n: int, event: str) -> dict[str, Any]:
    body = {"session_id": session, "transcript_path": "/dev/null", "cwd": str(ws),
            "hook_event_name": event, "timestamp": "2026-11-25T01:00:00Z",
            "tool_name": "read_file", "tool_input": {"file_path": str(ws / "src" / f"f{n}.py")}}
    if event == "AfterTool":
        body["tool_response"] = {"llmContent": f"x = {n}\n", "returnDisplay": ""}
    return body


def allowed(agent: str, out: str, code: int) -> bool:
    """Whether the answer lets the call run, in the agent's own convention."""
    if code != 0:
        return False
    answer = json.loads(out) if out.strip() else {}
    if agent == "claude-code":
        return bool(answer["hookSpecificOutput"]["permissionDecision"] == "allow")
    if agent == "cursor":
        return bool(answer.get("permission") == "allow")
    if agent == "codex":
        return "permissionDecision" not in out and "decision" not in answer
    return bool(answer.get("decision") in (None, "allow"))


@dataclass(frozen=True)
class Agent:
    name: str
    pre: str
    post: str | None
    payload: Callable[[Path, str, int, str], dict[str, Any]]


AGENTS = {"claude-code": Agent("claude-code", "PreToolUse", "PostToolUse", claude),
          "cursor": Agent("cursor", "beforeReadFile", None, cursor),  # a read has no "after"
          "codex": Agent("codex", "PreToolUse", "PostToolUse", codex),
          "gemini": Agent("gemini", "BeforeTool", "AfterTool", gemini)}


@dataclass
class Tally:
    answered: int = 0
    refused: int = 0
    lost: int = 0
    samples: list[float] = field(default_factory=list)
    why: dict[str, int] = field(default_factory=dict)


def one_call(argv: list[str], body: dict[str, Any]) -> tuple[float, str, int]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=json.dumps(body), text=True, capture_output=True,
                          timeout=CALL_TIMEOUT, check=False)
    took = (time.perf_counter() - started) * 1000
    if done.returncode not in (0, 2) and not done.stdout.strip():  # a crash: say where
        return took, (done.stderr.strip().splitlines() or [""])[-1], done.returncode
    return took, done.stdout, done.returncode


def session_loop(agent: Agent, argv: list[str], ws: Path, session: str, first: int,
                 until: float, tally: Tally, lock: threading.Lock) -> None:
    n = first
    while time.monotonic() < until:
        for event in (agent.pre, agent.post):
            if event is None:
                continue
            try:
                took, out, code = one_call(argv, agent.payload(ws, session, n, event))
                ok = allowed(agent.name, out, code) if event == agent.pre else code == 0
                why = None if ok else f"exit {code}: {out.strip()[:300]}"
            except (subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as exc:
                took, ok, why = CALL_TIMEOUT * 1000, False, f"lost: {type(exc).__name__}"
                code = -1
            with lock:
                tally.samples.append(took)
                if ok:
                    tally.answered += 1
                elif why and (why.startswith("lost") or code not in (0, 2)):
                    tally.lost += 1
                    tally.why[why] = tally.why.get(why, 0) + 1
                else:
                    tally.refused += 1
                    tally.why[str(why)] = tally.why.get(str(why), 0) + 1
        n += 1


def bare_loop(until: float, samples: list[float]) -> None:
    while time.monotonic() < until:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append((time.perf_counter() - started) * 1000)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--agents", default=",".join(AGENTS))
    args = parser.parse_args()
    chosen = [AGENTS[name] for name in args.agents.split(",")]
    with tempfile.TemporaryDirectory(prefix="soak-", dir="/tmp") as tmp:
        root = Path(tmp)
        ws = make_workspace(root / "ws", policy={"auto_approve": {"read": True,
                                                                  "max_consecutive": 0}},
                            files={f"src/f{n}.py": f"x = {n}\n" for n in range(FILES)})
        with DaemonProcess(root / "d.sock", root / "state") as daemon:
            tallies = {agent.name: Tally() for agent in chosen}
            lock = threading.Lock()
            until = time.monotonic() + args.seconds
            threads = []
            for index in range(args.sessions):
                agent = chosen[index % len(chosen)]
                argv = [sys.executable, "-m", "intentd.daemon.cli", "hook", agent.name,
                        "--socket", str(daemon.socket_path)]
                first = (index * FILES) // args.sessions
                threads.append(threading.Thread(target=session_loop, args=(
                    agent, argv, ws, f"soak-{agent.name}-{index}-{uuid.uuid4()}", first, until,
                    tallies[agent.name], lock)))
            bare: list[float] = []
            threads.append(threading.Thread(target=bare_loop, args=(until, bare)))
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.monotonic() - started
    report(tallies, elapsed, args.sessions)
    print(f"{'python -c pass':<14} {len(bare):>4} runs beside them: p50 "
          f"{statistics.median(bare) if bare else 0:.1f} ms, p99 {percentile(bare, 0.99):.1f} ms; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    return 0


def report(tallies: dict[str, Tally], elapsed: float, sessions: int) -> None:
    print(f"{len(tallies)} agents, {sessions} sessions, {elapsed:.0f} s, one daemon; "
          "a new hook process per call")
    print(f"{'agent':<12} {'calls':>6} {'answered':>9} {'refused':>8} {'lost':>5} "
          f"{'p50 ms':>8} {'p99 ms':>8}")
    everything = Tally()
    for name, tally in tallies.items():
        calls = tally.answered + tally.refused + tally.lost
        print(f"{name:<12} {calls:>6} {tally.answered:>9} {tally.refused:>8} {tally.lost:>5} "
              f"{statistics.median(tally.samples) if tally.samples else 0:>8.1f} "
              f"{percentile(tally.samples, 0.99):>8.1f}")
        everything.answered += tally.answered
        everything.refused += tally.refused
        everything.lost += tally.lost
        everything.samples += tally.samples
        for why, count in tally.why.items():
            print(f"    {count} x {why}")
    calls = everything.answered + everything.refused + everything.lost
    print(f"{'all':<12} {calls:>6} {everything.answered:>9} {everything.refused:>8} "
          f"{everything.lost:>5} {statistics.median(everything.samples):>8.1f} "
          f"{percentile(everything.samples, 0.99):>8.1f}")


if __name__ == "__main__":
    sys.exit(main())
