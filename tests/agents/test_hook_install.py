"""`intentd hook install|uninstall AGENT`: intentd's entries merged in, and taken out again
leaving the user's file byte for byte as it was."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from intentd.daemon.agents.hooks.install import HookCommand, Scope, is_intentd_hook
from intentd.daemon.agents.hooks.jsonedit import JsonEditError, append_item, parse, remove_items
from intentd.daemon.agents.hooks.registry import adapter
from intentd.daemon.cli import main

# A user's own settings, written by hand: odd spacing, a unicode escape, key order, no newline
CLAUDE_SETTINGS = """{
  "model" : "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard \\u00e9"}]}
    ],
    "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ]
  },
  "permissions": {"allow": ["Bash(npm test)"]}
}"""
CURSOR_HOOKS = """{
    "version": 1,
    "hooks": {
        "afterFileEdit": [{"command": "./hooks/format.sh"}],
        "beforeShellExecution": [
            {"command": "./hooks/audit.sh", "timeout": 5}
        ]
    }
}
"""
FILES = {"claude-code": (Path(".claude/settings.json"), CLAUDE_SETTINGS),
         "cursor": (Path(".cursor/hooks.json"), CURSOR_HOOKS)}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def run(*argv: str) -> int:
    return main(["hook", *argv])


@pytest.mark.parametrize("agent", sorted(FILES))
def test_install_then_uninstall_gives_back_the_users_file_byte_for_byte(
        agent: str, ws: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    relative, original = FILES[agent]
    path = ws / relative
    path.parent.mkdir()
    path.write_text(original)
    os.chmod(path, 0o640)
    assert run("install", agent, "--workspace", str(ws), "--command", "intentd") == 0
    merged = path.read_text()
    document = json.loads(merged)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # its mode kept
    assert merged.startswith(original[:original.index('"hooks"')])  # untouched before the hooks
    ours = [e for entries in document["hooks"].values() for e in entries if "intentd" in str(e)]
    assert ours and all(is_intentd_hook(e.get("command") or e["hooks"][0]["command"], agent)
                        for e in ours)
    assert "~/bin/guard" in merged or "./hooks/audit.sh" in merged
    assert run("install", agent, "--workspace", str(ws), "--command", "intentd") == 0
    assert path.read_text() == merged, "a second install changes nothing"
    assert run("uninstall", agent, "--workspace", str(ws)) == 0
    assert path.read_bytes() == original.encode()


@pytest.mark.parametrize("agent", sorted(FILES))
def test_a_new_file_is_created_and_removed_again(agent: str, ws: Path, home: Path) -> None:
    path = ws / FILES[agent][0]
    assert run("install", agent, "--workspace", str(ws)) == 0
    assert path.is_file() and json.loads(path.read_text())["hooks"]
    assert run("uninstall", agent, "--workspace", str(ws)) == 0
    assert not path.exists()


def test_user_level_goes_to_the_home_folder(home: Path) -> None:
    assert run("install", "cursor", "--user", "--command", "intentd") == 0
    document = json.loads((home / ".cursor" / "hooks.json").read_text())
    assert document["version"] == 1
    gates = document["hooks"]["beforeShellExecution"]
    assert gates == [{"command": "intentd hook cursor beforeShellExecution", "timeout": 60,
                      "failClosed": True}]


def test_dry_run_prints_and_writes_nothing(ws: Path, home: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "claude-code", "--workspace", str(ws), "--dry-run",
               "--command", "intentd", "--socket", "/run/user/1000/intentd/intentd.sock") == 0
    out = capsys.readouterr().out
    assert "intentd hook claude-code PreToolUse --socket /run/user/1000/intentd/intentd.sock" in out
    assert not (ws / ".claude").exists()


def test_a_file_that_is_not_json_is_left_alone(ws: Path, home: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = ws / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {,}')
    assert run("install", "claude-code", "--workspace", str(ws)) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert path.read_text() == '{"hooks": {,}'


def test_the_command_line_names_this_python_when_intentd_is_not_on_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    command = HookCommand.detect()
    assert command.argv[1:] == ("-m", "intentd.daemon.cli")
    assert is_intentd_hook(command.line("cursor"), "cursor")
    assert not is_intentd_hook(command.line("cursor"), "claude-code")
    assert not is_intentd_hook("echo intentd hook cursor-x", "cursor")


def test_json_edits_keep_every_other_byte() -> None:
    text = '{"a": [1,2],\n "b": {"x": [ ]}}'
    grown = append_item(text, ("b", "c"), {"d": 1})
    assert parse(grown).value == {"a": [1, 2], "b": {"x": [], "c": [{"d": 1}]}}
    assert remove_items(grown, ("b",), lambda item: item == {"d": 1}) == text
    windows = CURSOR_HOOKS.replace("\n", "\r\n")  # line ends as the file has them
    grown = append_item(windows, ("hooks", "stop"), {"command": "x"})
    assert "\n" not in grown.replace("\r\n", "")
    assert remove_items(grown, ("hooks",), lambda item: item == {"command": "x"}) == windows
    marked = "\ufeff" + text  # a byte-order mark stays where it was
    assert remove_items(append_item(marked, ("b", "c"), 1), ("b",), lambda i: i == 1) == marked
    with pytest.raises(JsonEditError):
        append_item('{"a": 1}', ("a", "b"), 1)
    with pytest.raises(JsonEditError):
        parse('{"a": 1} x')


def test_every_registered_installer_wires_its_gates_fail_closed(ws: Path, home: Path) -> None:
    for name in ("claude-code", "cursor"):
        installer = adapter(name).installer()
        assert installer is not None
        changes = installer.install(Scope(ws, home), HookCommand(("intentd",)))
        text = changes[0].text
        assert text is not None
        document = json.loads(text)
        gate = "PreToolUse" if name == "claude-code" else "beforeShellExecution"
        assert "block" in json.dumps(document["hooks"][gate]) or "failClosed" in text


def test_comments_are_kept_where_the_agent_reads_json_with_comments(tmp_path: Path) -> None:
    """Gemini CLI's settings.json may hold // and /* */ comments: they stay as written."""
    from intentd.daemon.agents.hooks.json_hooks import JsonHooksInstaller

    original = ('{\n  // my theme\n  "theme": "dark", /* why: eyes */\n  "hooks": {\n'
                '    "BeforeTool": [\n      {"hooks": [{"command": "guard"}]} // mine\n    ]\n  }\n}\n')
    path = tmp_path / "settings.json"
    path.write_text(original)
    installer = JsonHooksInstaller(
        "gemini", lambda scope: path,
        lambda command: {"BeforeTool": [{"hooks": [{"command": command.line("gemini")}]}]},
        comments=True)
    scope = Scope(tmp_path, tmp_path)
    merged = installer.install(scope, HookCommand(("intentd",)))[0].text
    assert merged is not None and "// my theme" in merged and "/* why: eyes */" in merged
    path.write_text(merged)
    assert installer.inspect(scope)[0].wired
    assert installer.uninstall(scope)[0].text == original
    with pytest.raises(JsonEditError):
        parse(original)  # plain JSON still refuses comments
