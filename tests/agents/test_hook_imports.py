"""A hook call loads only what it needs: no Qt, engine, server, anthropic, mcp or yaml."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.agents.hooks.handshake import INTENTS_FILE
from intentd.daemon.engine.intents import INTENTS_FILE as ENGINE_INTENTS_FILE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents import cursor_payloads

FORBIDDEN = ("PySide6", "anthropic", "mcp", "yaml", "pathspec", "bashlex", "intentd.gui",
             "intentd.daemon.engine", "intentd.daemon.server", "intentd.daemon.policy",
             "intentd.daemon.tools", "intentd.daemon.checkpoints")
# Runs the hook as the installed command does, in one process, then lists what it imported.
PROBE = """
import io, json, sys
from intentd.daemon.cli import main
payload, argv = sys.argv[1], sys.argv[2:]
sys.stdin = io.TextIOWrapper(io.BytesIO(payload.encode()))
code = main(argv)
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def loaded(argv: list[str], payload: Mapping[str, object], cwd: Path,
           check: bool = True) -> tuple[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(payload), *argv],
                          capture_output=True, text=True, timeout=60, cwd=cwd)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0 or not check, done.stderr
    return done.stdout, report["modules"]


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def test_a_gated_write_and_its_report_import_nothing_heavy(daemon: DaemonProcess,
                                                          tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", files={"src/a.py": "x\n"})
    common = {"session_id": "imports", "cwd": str(ws), "transcript_path": "/tmp/t.jsonl"}
    argv = ["hook", "claude-code", "--socket", str(daemon.socket_path), "--workspace", str(ws)]
    pre = {**common, "hook_event_name": "PreToolUse", "tool_name": "Read",
           "tool_input": {"file_path": str(ws / "src/a.py")}, "tool_use_id": "toolu_i"}
    out, modules = loaded(argv, pre, ws)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert heavy(modules) == []
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": {"type": "text"}}
    _, modules = loaded(argv, post, ws)
    assert heavy(modules) == []
    assert "intentd.daemon.agents.hooks.install" not in modules


def pre_read(agent: str, ws: Path) -> dict[str, Any]:
    """A read's pre-tool input, as each agent documents it."""
    readme = str(ws / "README.md")
    if agent == "cursor":
        return cursor_payloads.before_read(ws, ws / "README.md", "# r\n")
    if agent == "codex":
        return {"session_id": "imports", "transcript_path": None, "cwd": str(ws),
                "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default",
                "turn_id": "t", "tool_name": "Bash", "tool_input": {"command": "cat README.md"},
                "tool_use_id": "call_1"}
    if agent == "gemini":
        return {"session_id": "imports", "transcript_path": "/dev/null", "cwd": str(ws),
                "hook_event_name": "BeforeTool", "timestamp": "2026-11-25T01:00:00Z",
                "tool_name": "read_file", "tool_input": {"file_path": readme}}
    return {"clineVersion": "3.0.65", "hookName": "PreToolUse", "timestamp": "1", "taskId": "t",
            "workspaceRoots": [str(ws)], "userId": "u",
            "preToolUse": {"toolName": "read_file", "parameters": {"path": "README.md"}}}


@pytest.mark.parametrize("agent", ["cursor", "codex", "gemini", "cline"])
def test_every_agents_hook_imports_nothing_heavy(agent: str, daemon: DaemonProcess,
                                                 tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", files={"README.md": "# r\n"})
    argv = ["hook", agent, "--socket", str(daemon.socket_path), "--workspace", str(ws)]
    _, modules = loaded(argv, pre_read(agent, ws), ws, check=False)
    assert heavy(modules) == []


def test_the_handshake_names_the_engines_intents_file() -> None:
    assert INTENTS_FILE == ENGINE_INTENTS_FILE
