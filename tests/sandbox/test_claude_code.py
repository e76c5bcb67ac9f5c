"""Claude Code runs its own Bash: the hook's post-tool report is audited and Claude is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.testing import DaemonProcess
from tests.agents.test_claude_hook import Hook, event
from tests.sandbox.conftest import git_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return git_workspace(tmp_path / "ws", ["src/**"], {"auto_approve": {"all_commands": True}})


def test_claude_is_told_what_the_scope_audit_undid(daemon: DaemonProcess, ws: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(daemon.socket_path, ws, monkeypatch, capsys)
    hook(event("PreToolUse", "Bash", {"command": "intentd hook select INT-1"}, ws))
    assert hook.pre("Bash", {"command": "make"}, "toolu_make")[0] == "allow"
    (ws / "src" / "made.py").write_text("made\n")  # what make did, as Claude Code ran it
    (ws / "docs" / "stray.md").write_text("outside the scope\n")
    answer = hook(event("PostToolUse", "Bash", {"command": "make"}, ws, use_id="toolu_make",
                        response={"stdout": "done", "stderr": "", "interrupted": False}))
    told = answer["hookSpecificOutput"]
    assert told["hookEventName"] == "PostToolUse"
    assert "undone: docs/stray.md (created; removed" in told["additionalContext"]
    assert not (ws / "docs" / "stray.md").exists() and (ws / "src" / "made.py").exists()


def test_nothing_is_said_when_all_stayed_in_scope(daemon: DaemonProcess, ws: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(daemon.socket_path, ws, monkeypatch, capsys)
    hook(event("PreToolUse", "Bash", {"command": "intentd hook select INT-1"}, ws))
    assert hook.pre("Bash", {"command": "make"}, "toolu_make")[0] == "allow"
    (ws / "src" / "made.py").write_text("made\n")
    assert hook(event("PostToolUse", "Bash", {"command": "make"}, ws, use_id="toolu_make",
                      response={"stdout": "done"})) == {}
