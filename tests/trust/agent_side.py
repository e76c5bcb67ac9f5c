"""Agent-side processes that try every person method: helpers shared by tests and figures."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client

HERE = Path(__file__).parent
PROBE = HERE / "probe.py"
FAKE_AGENT = HERE / "fake_agent.py"
FAKE_MCP_HOST = HERE / "fake_mcp_host.py"


def probe_command(socket_path: Path, ws: Path, *ids: str) -> str:
    return " ".join(shlex.quote(str(a)) for a in (sys.executable, PROBE, socket_path, ws, *ids))


def answers_in(output: str) -> dict[str, Any]:
    """The probe's JSON line in a command's output."""
    line = next(line for line in output.splitlines() if line.startswith("{"))
    return dict(json.loads(line))


def session(client: Client, ws: Path) -> str:
    session_id = str(client.call(protocol.SESSIONS_OPEN, {"workspace": str(ws)})["session_id"])
    client.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    return session_id


def run_command(client: Client, session_id: str, command: str) -> dict[str, Any]:
    answer: dict[str, Any] = client.call(protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "execute_command", "args": {"command": command}},
        timeout=60)
    return answer


def wait_file(path: Path, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            time.sleep(0.05)  # written in one go; let it land
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def under_fake_agent(socket_path: Path, ws: Path) -> dict[str, Any]:
    """fake_agent.py's answers: probes before and after the Claude Code hook named it."""
    event = {"session_id": "5f0c1a9e-5b7d-4c2a-9e1f-0a1b2c3d4e50", "cwd": str(ws),
             "hook_event_name": "PreToolUse", "tool_name": "Read",
             "tool_input": {"file_path": str(ws / "README.md")}, "tool_use_id": "toolu_1"}
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(ws)}
    done = subprocess.run([sys.executable, str(FAKE_AGENT), str(socket_path), str(ws),
                           json.dumps(event)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def under_mcp_host(socket_path: Path, ws: Path) -> dict[str, Any]:
    """fake_mcp_host.py's answers: probes before and while `intentd mcp` serves it."""
    done = subprocess.run([sys.executable, str(FAKE_MCP_HOST), str(socket_path), str(ws)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def under_named_agent(socket_path: Path, ws: Path, name: str = "claude") -> dict[str, Any]:
    """The probe run by a process whose program name is a known agent's (`exec -a claude`)."""
    probe = probe_command(socket_path, ws)
    spawn = f"import subprocess, sys; sys.exit(subprocess.call({probe!r}, shell=True))"
    done = subprocess.run(["bash", "-c", f"exec -a {name} {shlex.quote(sys.executable)} -c "
                           f"{shlex.quote(spawn)}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return answers_in(done.stdout)


def refused(answers: dict[str, Any]) -> tuple[int, int]:
    """(refused as person-only, tried)."""
    return sum(code == protocol.PERSON_ONLY for code in answers.values()), len(answers)
