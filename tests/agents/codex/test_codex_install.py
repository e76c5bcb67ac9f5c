"""`intentd hook install|uninstall codex`: hooks.json merged byte for byte, trust that Codex itself
computed, and the real Codex CLI reading what install wrote."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.agents.hooks.codex_install import INSTALLER, codex_home, hooks_path
from intentd.daemon.agents.hooks.install import HookCommand, Scope, apply
from intentd.daemon.cli import main
from tests.agents.clis import CODEX, installed

USER_HOOKS = """{
  // not JSON5: Codex reads plain JSON
  "hooks": {
    "PreToolUse": [
      {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "~/bin/audit.sh",
                                        "timeout": 5}]}
    ],
    "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ]
  }
}
""".replace("  // not JSON5: Codex reads plain JSON\n", "")
USER_CONFIG = ('model = "gpt-5.5"\napproval_policy = "on-request"\n\n'
               '[hooks.state."/home/me/.codex/hooks.json:stop:0:0"]\n'
               'trusted_hash = "sha256:0123"\n')
COMMAND = HookCommand(("intentd",), Path("/run/user/1000/intentd/intentd.sock"))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    folder = tmp_path / "home"
    (folder / ".codex").mkdir(parents=True)
    return folder


@pytest.fixture
def codex_on_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    program = installed(CODEX)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    return program


def apply_quietly(changes: list[Any]) -> None:
    import io
    apply(changes, False, io.StringIO())


def hooks_list(program: Path, codex_dir: Path, cwd: Path) -> dict[str, Any]:
    """Codex's own view of the hooks it found, with each one's trust (`codex app-server`)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    process = subprocess.Popen([str(program), "app-server"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               cwd=cwd, env={**os.environ, "CODEX_HOME": str(codex_dir)})
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        process.stdin.flush()
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                data: dict[str, Any] = message["result"]["data"][0]
                return data
        raise AssertionError("codex app-server did not answer hooks/list")
    finally:
        process.kill()
        process.wait()


def test_install_then_uninstall_leaves_the_users_hooks_and_config_byte_for_byte(
        home: Path, codex_on_path: Path) -> None:
    scope = Scope(None, home)
    (home / ".codex" / "hooks.json").write_text(USER_HOOKS)
    (home / ".codex" / "config.toml").write_text(USER_CONFIG)
    apply_quietly(INSTALLER.install(scope, COMMAND))
    written = json.loads((home / ".codex" / "hooks.json").read_text())
    assert written["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "~/bin/audit.sh"
    ours = written["hooks"]["PreToolUse"][1]["hooks"][0]
    assert ours["command"].startswith("intentd hook codex PreToolUse --socket ")
    assert ours["timeout"] == 120 and "exit 2" in ours["command"]
    assert set(written["hooks"]) == {"PreToolUse", "Stop", "SessionStart", "PermissionRequest",
                                     "PostToolUse", "SessionEnd"}
    config = (home / ".codex" / "config.toml").read_text()
    assert config.startswith(USER_CONFIG) and config.count("trusted_hash") == 6
    # a second install changes nothing
    again = INSTALLER.install(scope, COMMAND)
    assert again and all(change.text == change.path.read_text() for change in again)
    apply_quietly(INSTALLER.uninstall(scope))
    assert (home / ".codex" / "hooks.json").read_text() == USER_HOOKS
    assert (home / ".codex" / "config.toml").read_text() == USER_CONFIG


def test_files_install_created_are_removed_again(home: Path, tmp_path: Path,
                                                 codex_on_path: Path) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    scope = Scope(ws, home)
    apply_quietly(INSTALLER.install(scope, COMMAND))
    assert hooks_path(scope) == ws / ".codex" / "hooks.json" and hooks_path(scope).is_file()
    assert f'"{ws}/.codex/hooks.json:pre_tool_use:0:0"' in (
        home / ".codex" / "config.toml").read_text()  # trust lives in the user's config
    apply_quietly(INSTALLER.uninstall(scope))
    assert not hooks_path(scope).exists() and not (home / ".codex" / "config.toml").exists()


def test_the_real_codex_cli_runs_what_install_wrote_and_trusts_it(
        home: Path, tmp_path: Path, codex_on_path: Path) -> None:
    (home / ".codex" / "hooks.json").write_text(USER_HOOKS)
    apply_quietly(INSTALLER.install(Scope(None, home), COMMAND))
    listed = hooks_list(codex_on_path, home / ".codex", tmp_path)
    assert listed["warnings"] == [] and listed["errors"] == []
    ours = {h["eventName"]: h for h in listed["hooks"] if "intentd hook codex" in h["command"]}
    assert set(ours) == {"preToolUse", "permissionRequest", "postToolUse", "sessionStart",
                         "sessionEnd"}
    assert {h["trustStatus"] for h in ours.values()} == {"trusted"}
    assert ours["preToolUse"]["timeoutSec"] == 120 and ours["preToolUse"]["matcher"] == "*"
    theirs = [h for h in listed["hooks"] if h["command"] == "~/bin/audit.sh"]
    assert theirs and theirs[0]["trustStatus"] == "untrusted"  # theirs is not ours to trust
    assert INSTALLER.inspect(Scope(None, home))[0].problems == ()


def test_without_codex_on_path_the_hooks_are_written_and_doctor_says_to_trust_them(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    scope = Scope(None, home)
    changes = INSTALLER.install(scope, COMMAND)
    assert [c.path for c in changes] == [home / ".codex" / "hooks.json"]
    apply_quietly(changes)
    (wiring,) = INSTALLER.inspect(scope)
    assert wiring.wired and any("/hooks" in problem for problem in wiring.problems)


def test_codex_home_is_honoured_and_dry_run_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert codex_home(Scope(None, tmp_path)) == tmp_path / "codex-home"
    assert main(["hook", "install", "codex", "--user", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "codex-home/hooks.json (would be written)" in out and "hook codex PreToolUse" in out
    assert not (tmp_path / "codex-home").exists()


def test_a_hook_the_user_added_after_intentds_stays_trusted_after_uninstall(
        home: Path, tmp_path: Path, codex_on_path: Path) -> None:
    """Codex's trust key holds a hook's place in the file: taking intentd's entry out from
    before the user's moves theirs, and their trust moves with it."""
    from intentd.daemon.agents.hooks.jsonedit import append_item

    scope = Scope(None, home)
    hooks_file, config = home / ".codex" / "hooks.json", home / ".codex" / "config.toml"
    hooks_file.write_text(USER_HOOKS)
    apply_quietly(INSTALLER.install(scope, COMMAND))
    later = {"matcher": "^apply_patch$", "hooks": [{"type": "command", "command": "lint.sh"}]}
    hooks_file.write_text(append_item(hooks_file.read_text(), ("hooks", "PreToolUse"), later))
    (mine,) = [h for h in hooks_list(codex_on_path, home / ".codex", tmp_path)["hooks"]
               if h["command"] == "lint.sh"]
    assert mine["key"].endswith(":pre_tool_use:2:0")  # after intentd's entry
    with config.open("a") as handle:  # the person trusts it in Codex's /hooks
        handle.write(f'\n[hooks.state."{mine["key"]}"]\ntrusted_hash = "{mine["currentHash"]}"\n')
    apply_quietly(INSTALLER.uninstall(scope))
    (mine,) = [h for h in hooks_list(codex_on_path, home / ".codex", tmp_path)["hooks"]
               if h["command"] == "lint.sh"]
    assert mine["key"].endswith(":pre_tool_use:1:0") and mine["trustStatus"] == "trusted"
    assert "intentd" not in hooks_file.read_text() and "intentd" not in config.read_text()


def test_doctor_says_when_codex_would_not_read_the_workspaces_hooks(
        home: Path, tmp_path: Path, codex_on_path: Path) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    scope = Scope(ws, home)
    apply_quietly(INSTALLER.install(scope, COMMAND))
    (wiring,) = INSTALLER.inspect(scope)
    assert wiring.wired and any("codex exec --trust" in p for p in wiring.problems)
    with (home / ".codex" / "config.toml").open("a") as handle:
        handle.write(f'\n[projects."{ws}"]\ntrust_level = "trusted"\n')
    assert INSTALLER.inspect(scope)[0].problems == ()
    listed = hooks_list(codex_on_path, home / ".codex", ws)  # and Codex now runs them, trusted
    ours = [h for h in listed["hooks"] if "intentd hook codex" in h["command"]]
    assert len(ours) == 5 and {h["trustStatus"] for h in ours} == {"trusted"}
    assert {h["source"] for h in ours} == {"project"}


def test_doctor_says_when_codex_has_hooks_turned_off(home: Path, codex_on_path: Path) -> None:
    scope = Scope(None, home)
    apply_quietly(INSTALLER.install(scope, COMMAND))
    assert INSTALLER.inspect(scope)[0].problems == ()
    with (home / ".codex" / "config.toml").open("a") as handle:
        handle.write("\n[features]\nhooks = false\n")
    assert any("turned off" in p for p in INSTALLER.inspect(scope)[0].problems)
