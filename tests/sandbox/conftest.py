"""A real daemon, a git workspace with one intent owning src/, and a person who approves."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace
from tests.conftest import clients_of
from tests.server.helpers import Background, open_session, wait_notification

FILES = {"src/app.py": "print('hi')\n", "src/old.txt": "old notes\n", "docs/guide.md": "# guide\n",
         "README.md": "# demo\n"}


def git_workspace(root: Path, scope: list[str], policy: dict[str, Any] | None = None) -> Path:
    ws = make_workspace(root, make_intent(owned_scope=scope), policy=policy, files=FILES)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return git_workspace(tmp_path / "ws", ["src/**"])


Connect = Callable[[str], Client]


@contextmanager
def daemon_with(short_dir: Path, env: dict[str, str]) -> Iterator[Connect]:
    """A daemon started with `env` added to its environment, and connect(name) to it."""
    with DaemonProcess(short_dir / "d.sock", short_dir / "state", env) as daemon, \
            clients_of(daemon) as make:
        yield make


def path_with(short_dir: Path, program: str, script: str) -> str:
    """A PATH whose first folder holds `program`, the given shell script: a program that is not
    what its name says, earlier on PATH than the system's."""
    shadow = short_dir / "bin"
    shadow.mkdir()
    (shadow / program).write_text(script)
    (shadow / program).chmod(0o755)
    return f"{shadow}{os.pathsep}{os.environ.get('PATH', '')}"


def two_agents(connect: Connect, tmp_path: Path) -> tuple[Path, Client, str, Client, str]:
    """One workspace, two agents: the first on INT-1 (src/), the second on INT-2 (docs/)."""
    workspace = make_workspace(tmp_path / "ws", make_intent("INT-1", owned_scope=["src/**"]),
                               make_intent("INT-2", owned_scope=["docs/**"]),
                               policy={"auto_approve": {"all_commands": True}},
                               files={"src/app.py": "x\n", "docs/guide.md": "# guide\n"})
    first, second = connect("agent-1"), connect("agent-2")
    one, two = open_session(first, workspace), open_session(second, workspace, select=False)
    second.call(protocol.INTENTS_SELECT, {"session_id": two, "intent_id": "INT-2"})
    return workspace, first, one, second, two


def approved_command(connect: Connect, workspace: Path, command: str) -> dict[str, Any]:
    """Run a command through the daemon as an agent, a person approving it; the tools/call answer."""
    agent, person = connect("agent"), connect("gui")
    person.call(protocol.EVENTS_SUBSCRIBE, {})
    session_id = open_session(agent, workspace)
    call = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id,
                                                   "tool": "execute_command",
                                                   "args": {"command": command}})
    try:
        request = wait_notification(person, protocol.APPROVALS_REQUESTED)
    except AssertionError:
        raise AssertionError(f"the command was not put to a person: {call.result()}") from None
    person.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "approve"})
    answer: dict[str, Any] = call.result(30)
    assert answer["decision"] == "allow" and answer["approved_by"] == "person"
    return answer


def unasked_command(connect: Connect, workspace: Path, command: str) -> dict[str, Any]:
    """Run a command the policy auto-approves (the workspace's policy must say so)."""
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    answer: dict[str, Any] = agent.call(protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "execute_command", "args": {"command": command}})
    assert answer["decision"] == "allow" and answer["approved_by"] == "auto", answer
    return answer


def ledger_entries(client: Client, workspace: Path) -> list[dict[str, Any]]:
    answer = client.call(protocol.LEDGER_QUERY, {"workspace": str(workspace)})
    return list(answer["entries"])
