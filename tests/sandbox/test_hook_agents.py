"""Codex, Cursor and Claude Code through its HTTP hook run their own commands: the post-tool
report is audited, what lay outside the scope is undone, and the agent is told in the answer of
a hook it reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.agents import cursor_payloads as cursor
from tests.agents.codex.test_codex_hook import Hook as CodexHook
from tests.agents.hook_runner import HookRunner
from tests.sandbox.conftest import git_workspace
from tests.server.http_hook_client import HookClient, hook_files, payload

UNASKED = {"auto_approve": {"all_commands": True}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return git_workspace(tmp_path / "ws", ["src/**"], UNASKED)


def make(ws: Path) -> None:
    """What the agent's `make` did, unconfined: one change in the scope, one outside it."""
    (ws / "src" / "made.py").write_text("made\n")
    (ws / "docs" / "stray.md").write_text("outside the scope\n")


def undone(ws: Path) -> bool:
    return not (ws / "docs" / "stray.md").exists() and (ws / "src" / "made.py").exists()


def test_codex_is_told_what_the_scope_audit_undid(daemon: DaemonProcess, ws: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    hook = CodexHook(daemon.socket_path, ws, monkeypatch, capsys)
    assert hook.pre("pre_bash_read", use_id="call_s", command="intentd hook select INT-1").allowed
    assert hook.pre("pre_bash_write", use_id="call_m", command="make").allowed
    make(ws)
    answer = hook.post("post_bash_write", use_id="call_m", command="make")
    told = answer.json["hookSpecificOutput"]
    assert answer.code == 0 and told["hookEventName"] == "PostToolUse"
    assert "undone: docs/stray.md (created; removed" in told["additionalContext"]
    assert undone(ws)


def test_cursor_shell_commands_are_audited_and_undone(daemon: DaemonProcess, ws: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Cursor reports a shell command with afterShellExecution, whose answer Cursor ignores:
    what the audit undid is told, once, in the answer to the command's postToolUse."""
    hook = HookRunner("cursor", daemon.socket_path, monkeypatch, capsys)
    assert hook(cursor.before_shell(ws, "intentd hook select INT-1")).out["permission"] == "allow"
    assert hook(cursor.before_shell(ws, "make")).out["permission"] == "allow"
    make(ws)
    assert hook(cursor.after_shell(ws, "make", "done")).out == {}
    assert undone(ws)
    post = cursor.post_tool_use(ws, "Shell", {"command": "make", "working_directory": str(ws)},
                                "done")
    told = hook(post)
    assert told.code == 0
    assert "undone: docs/stray.md (created; removed" in told.out["additional_context"]
    assert hook(post).out == {}  # told once
    with Client(daemon.socket_path) as client:
        entries = client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"]
    audit = entries[-1]["receipt"]["data"]["scope_audit"]
    assert entries[-1]["intent"]["agent"] == "cursor" and audit["undone"] == ["docs/stray.md"]


@pytest.fixture
def http_hook_daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    """A daemon whose HTTP hook for Claude Code listens on a free port."""
    with DaemonProcess(short_dir / "d.sock", short_dir / "state",
                       extra_env={"INTENTD_HTTP_HOOK": "0"}) as process:
        yield process


def test_claude_through_the_http_hook_is_told_what_the_scope_audit_undid(
        http_hook_daemon: DaemonProcess, ws: Path) -> None:
    hook = HookClient(*hook_files(http_hook_daemon.state_dir))
    hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
    verdict, _ = hook.pre(ws, "Bash", {"command": "make"}, use_id="toolu_m")
    assert verdict == "allow"
    make(ws)
    status, answer = hook.post(payload("PostToolUse", ws, "Bash", {"command": "make"},
                                       use_id="toolu_m", response={"stdout": "done"}))
    told = answer["hookSpecificOutput"]
    assert status == 200 and told["hookEventName"] == "PostToolUse"
    assert "undone: docs/stray.md (created; removed" in told["additionalContext"]
    assert undone(ws)
