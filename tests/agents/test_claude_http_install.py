"""`intentd hook install claude-code --http`: the entries, the round trip, and what doctor flags."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from intentd.daemon.agents.hooks import claude_http_install as http_install
from intentd.daemon.agents.hooks.claude_install import INSTALLER as COMMAND_INSTALLER
from intentd.daemon.agents.hooks.install import HookCommand, Scope
from intentd.daemon.server.hook_token import TOKEN_ENV, default_port

USER_SETTINGS = """{
  // not JSON's, but people keep their own hooks here
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/lint-bash"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
  }
}
""".replace("  // not JSON's, but people keep their own hooks here\n", "")
COMMAND = HookCommand(("intentd",), Path("/run/user/1000/intentd/intentd.sock"))


@pytest.fixture
def scope(tmp_path: Path) -> Scope:
    (tmp_path / "ws").mkdir()
    return Scope(tmp_path / "ws", tmp_path / "home")


def apply(scope: Scope, installer: http_install.JsonHooksInstaller, uninstall: bool = False
          ) -> None:
    for change in installer.uninstall(scope) if uninstall else installer.install(scope, COMMAND):
        if change.text is None:
            change.path.unlink()
        else:
            change.path.parent.mkdir(parents=True, exist_ok=True)
            change.path.write_text(change.text)


def test_the_entries_claude_code_documents(scope: Scope) -> None:
    settings = json.loads(http_install.settings(scope, COMMAND, port=47123))["hooks"]
    pre = settings["PreToolUse"][0]
    assert pre["matcher"] == "*"
    hook = pre["hooks"][0]
    assert hook == {"type": "http", "url": "http://127.0.0.1:47123/claude-code?timeout=300",
                    "timeout": 300, "headers": {"Authorization": f"Bearer ${TOKEN_ENV}"},
                    "allowedEnvVars": [TOKEN_ENV], "onFailure": "block"}
    for event in ("PostToolUse", "PostToolUseFailure", "SessionEnd"):
        assert settings[event][0]["hooks"][0]["type"] == "http"
        assert "onFailure" not in settings[event][0]["hooks"][0]
    # Claude Code runs no HTTP hook at SessionStart: the handshake stays a command
    start = settings["SessionStart"][0]["hooks"][0]
    assert start == {"type": "command", "command":
                     "intentd hook claude-code --socket /run/user/1000/intentd/intentd.sock"}


def test_install_then_uninstall_leaves_the_users_file_byte_for_byte(scope: Scope) -> None:
    path = scope.base() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(USER_SETTINGS)
    installer = http_install.installer(port=47123)
    apply(scope, installer)
    installed = path.read_text()
    hooks = json.loads(installed)["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == "~/bin/lint-bash"
    assert hooks["PreToolUse"][1]["hooks"][0]["type"] == "http"
    assert json.loads(installed)["permissions"] == {"allow": ["Bash(npm test)"]}
    apply(scope, installer)  # a second install changes nothing
    assert path.read_text() == installed
    apply(scope, installer, uninstall=True)
    assert path.read_text() == USER_SETTINGS


def test_http_replaces_the_command_hooks_and_back(scope: Scope) -> None:
    path = scope.base() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(USER_SETTINGS)
    apply(scope, COMMAND_INSTALLER)
    apply(scope, http_install.installer(port=47123))
    hooks = json.loads(path.read_text())["hooks"]
    kinds = [h["type"] for group in hooks["PreToolUse"] for h in group["hooks"]]
    assert kinds == ["command", "http"]  # the user's lint, then intentd's HTTP hook only
    apply(scope, http_install.installer(port=47123), uninstall=True)
    assert path.read_text() == USER_SETTINGS


def test_the_url_follows_the_running_daemons_port(scope: Scope, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "xdg-state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    assert http_install.current_port() == default_port()
    folder = state / "intentd" / "http-hook"
    folder.mkdir(parents=True)
    (folder / "status.json").write_text(json.dumps({"port": 47555}))
    text = http_install.installer().install(scope, COMMAND)[0].text or ""
    assert "http://127.0.0.1:47555/claude-code" in text


def test_doctor_flags_a_hook_that_would_fail_open_or_send_no_token(scope: Scope) -> None:
    document = json.loads(http_install.settings(scope, COMMAND, port=47123))
    assert http_install.validate(document) == []
    hook = document["hooks"]["PreToolUse"][0]["hooks"][0]
    del hook["onFailure"]
    hook["allowedEnvVars"] = []
    hook["timeout"] = 60  # the URL still says 300
    problems = http_install.validate(document)
    assert any("onFailure" in p for p in problems) and any(TOKEN_ENV in p for p in problems)
    assert any("longer than the hook's timeout of 60 s" in p for p in problems)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to listen as another user")
def test_doctor_flags_another_user_holding_the_port() -> None:
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 that another user may run")
    listener = subprocess.Popen(
        [python, "-c", "import socket, sys, time\ns = socket.socket()\n"
         "s.bind(('127.0.0.1', 0)); s.listen()\nprint(s.getsockname()[1], flush=True)\n"
         "time.sleep(30)"], user=65534, group=65534, stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        assert listener.stdout is not None
        port = int(listener.stdout.readline())
        problems = http_install.port_problems(f"http://127.0.0.1:{port}/claude-code")
        assert problems and "ANOTHER USER (uid 65534)" in problems[0]
    finally:
        listener.kill()
        listener.wait()
    time.sleep(0.05)
    assert http_install.port_problems(f"http://127.0.0.1:{port}/claude-code") == []


def test_only_intentds_own_http_hooks_count_as_ours() -> None:
    assert http_install.ours({"type": "http", "url": "http://127.0.0.1:9/claude-code"})
    assert http_install.ours({"type": "http", "url": "http://localhost:9/claude-code?x=1"})
    assert not http_install.ours({"type": "http", "url": "https://hooks.example/claude-code"})
    assert not http_install.ours({"type": "http", "url": "http://127.0.0.1:9/other"})
    assert not http_install.ours({"matcher": "*", "hooks": [
        {"type": "http", "url": "http://127.0.0.1:9/claude-code"},
        {"type": "command", "command": "say hi"}]})
