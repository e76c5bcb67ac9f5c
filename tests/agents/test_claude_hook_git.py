"""Claude Code runs git itself, without intentd's git safety setting: through the hook, a git
command that could obey a config the agent planted must never be allowed unasked."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.test_claude_hook import Hook

PLANTED = {"src/evil/HEAD": "ref: refs/heads/main\n",
           "src/evil/config": "[core]\n\tbare = true\n[diff]\n\texternal = ./src/evil/run.sh\n",
           "src/evil/run.sh": "#!/bin/sh\ntouch pwned\n", "src/app.py": "x = 1\n"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", files=PLANTED)


@pytest.fixture
def hook(daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Hook:
    return Hook(daemon.socket_path, ws, monkeypatch, capsys)


@pytest.mark.parametrize("command", [
    "git -C src/evil diff", "git -C src/evil --bare diff --no-index HEAD config",
    "cd src/evil && git log", "bash -lc 'cd src/evil && git status'", "GIT_DIR=src/evil git log"])
def test_git_that_could_read_a_planted_config_is_not_allowed(hook: Hook, command: str) -> None:
    verdict, reason = hook.pre("Bash", {"command": command})
    assert verdict != "allow", reason


def test_git_in_the_workspace_itself_is_still_allowed(hook: Hook) -> None:
    verdict, reason = hook.pre("Bash", {"command": "git status"})
    assert verdict == "allow", reason
