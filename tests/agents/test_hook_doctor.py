"""`intentd doctor` lists the agents wired to the workspace and the user, and what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

from intentd.daemon.agents.hooks.install import HookCommand, Scope
from intentd.daemon.agents.hooks.registry import adapter
from intentd.daemon.setup.doctor.agents import check_agents


def install(agent: str, scope: Scope, command: HookCommand) -> Path:
    installer = adapter(agent).installer()
    assert installer is not None
    change = installer.install(scope, command)[0]
    assert change.text is not None
    change.path.parent.mkdir(parents=True, exist_ok=True)
    change.path.write_text(change.text)
    return change.path


def by_name(workspace: Path, home: Path) -> dict[str, tuple[str, str]]:
    return {r.name: (r.status, r.detail) for r in check_agents(workspace, home)
            if r.name.startswith(("claude-code", "cursor", "agent hooks"))}


def test_wired_agents_are_listed_with_their_problems(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    assert by_name(ws, home) == {"agent hooks": by_name(ws, home)["agent hooks"]}
    python = HookCommand.detect(command=None)  # this Python: its program exists
    install("claude-code", Scope(ws, home), python)
    hooks = install("cursor", Scope(None, home), python)
    found = by_name(ws, home)
    assert found["claude-code (workspace)"][0] == "ok"
    assert found["cursor (user)"][0] == "ok" and "agent hooks" not in found
    document = json.loads(hooks.read_text())
    document["version"] = 2
    del document["hooks"]["beforeShellExecution"]
    hooks.write_text(json.dumps(document))
    status, detail = by_name(ws, home)["cursor (user)"]
    assert status == "fail" and "version" in detail and "beforeShellExecution" in detail


def test_a_command_that_cannot_start_is_reported(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    install("claude-code", Scope(ws, home), HookCommand(("/nonexistent/intentd",)))
    status, detail = by_name(ws, home)["claude-code (workspace)"]
    assert status == "fail" and "/nonexistent/intentd" in detail and "not found" in detail


def test_a_broken_settings_file_is_a_warning(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text("{")
    status, detail = by_name(ws, home)["claude-code (workspace)"]
    assert status == "warn" and "not valid JSON" in detail
