"""`intentd hook install|uninstall gemini`: settings.json merged byte for byte, and the real
Gemini CLI running what install wrote (and refusing when the hook cannot even start)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.agents.hooks.gemini_install import (
    APPROVAL_TIMEOUT,
    GATE_TIMEOUT,
    GUARD,
    INSTALLER,
    settings_path,
)
from intentd.daemon.agents.hooks.install import HookCommand, Scope, is_intentd_hook
from intentd.daemon.agents.hooks.jsonedit import parse
from intentd.daemon.cli import main
from tests.agents.clis import GEMINI, installed
from tests.agents.fake_gemini import FakeGeminiAPI, Turn, call, text
from tests.agents.gemini_run import environment, make_home, run_gemini

FIXTURES = Path(__file__).parent / "gemini_fixtures"
# A user's own settings, written by hand: the docs' example hook, other settings around it,
# odd spacing, a unicode escape, no final newline
DOCS_EXAMPLE = json.loads((FIXTURES / "documented.json").read_text())["settings_example"]
USER_SETTINGS = ('{\n  // my own\n  "theme" : "GitHub", /* the light one */\n  "hooks": '
                 + json.dumps(DOCS_EXAMPLE["hooks"]) + ' // scans writes\n'
                 + ',\n  "general": {"vimMode": true, "preferredEditor": "vim \\u00e9"}\n}')


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def run(*argv: str) -> int:
    return main(["hook", *argv])


def ours(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {event: [h for group in groups for h in group.get("hooks", [])
                    if is_intentd_hook(h.get("command"), "gemini")]
            for event, groups in document["hooks"].items()}


@pytest.mark.parametrize("where", ["--workspace", "--user"])
def test_install_then_uninstall_gives_back_the_users_settings_byte_for_byte(
        where: str, ws: Path, home: Path) -> None:
    scope = Scope(ws if where == "--workspace" else None, home)
    path = settings_path(scope)
    path.parent.mkdir()
    path.write_text(USER_SETTINGS)
    os.chmod(path, 0o600)
    argv = [where, str(ws)] if where == "--workspace" else [where]
    assert run("install", "gemini", *argv, "--command", "intentd") == 0
    merged = path.read_text()
    document = parse(merged, True).value
    assert "// my own" in merged and "/* the light one */" in merged and "// scans" in merged
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert merged.startswith(USER_SETTINGS[:USER_SETTINGS.index('"hooks"')])
    assert document["hooks"]["BeforeTool"][0] == DOCS_EXAMPLE["hooks"]["BeforeTool"][0]
    assert document["general"] == {"vimMode": True, "preferredEditor": "vim \u00e9"}
    assert {event: len(hooks) for event, hooks in ours(document).items()} == {
        "BeforeTool": 1, "AfterTool": 1, "SessionStart": 1, "SessionEnd": 1}
    assert run("install", "gemini", *argv, "--command", "intentd") == 0
    assert path.read_text() == merged, "a second install changes nothing"
    assert run("uninstall", "gemini", *argv) == 0
    assert path.read_bytes() == USER_SETTINGS.encode()


def test_the_entries_gemini_gets(ws: Path, home: Path) -> None:
    socket = Path("/run/user/1000/intentd/intentd.sock")
    changes = INSTALLER.install(Scope(ws, home), HookCommand(("intentd",), socket))
    assert [c.path for c in changes] == [ws / ".gemini" / "settings.json"]
    assert changes[0].text is not None
    hooks = ours(json.loads(changes[0].text))
    gate = hooks["BeforeTool"][0]
    # milliseconds in Gemini's settings, seconds on the command line: the same 120 s
    assert gate["timeout"] == GATE_TIMEOUT * 1000 and gate["name"] == "intentd-gate"
    assert gate["command"] == (
        f"intentd hook gemini BeforeTool --socket {socket} --hook-timeout {GATE_TIMEOUT} "
        f"--approval-timeout {APPROVAL_TIMEOUT}" + GUARD)
    for event in ("AfterTool", "SessionStart", "SessionEnd"):
        assert GUARD not in hooks[event][0]["command"]  # exit 2 there would hide a result
        assert hooks[event][0]["timeout"] == 30_000
    assert run("install", "gemini", "--workspace", str(ws)) == 0
    assert run("uninstall", "gemini", "--workspace", str(ws)) == 0
    assert not (ws / ".gemini" / "settings.json").exists()  # intentd made it, intentd took it


def test_inspect_reports_settings_that_switch_intentd_off(ws: Path, home: Path) -> None:
    scope = Scope(ws, home)
    path = settings_path(scope)
    path.parent.mkdir()
    path.write_text(json.dumps({"hooksConfig": {"enabled": False,
                                                "disabled": ["intentd-gate", "other"]}}))
    assert run("install", "gemini", "--workspace", str(ws), "--command", "intentd") == 0
    (wiring,) = INSTALLER.inspect(scope)
    assert wiring.wired
    assert any("enabled" in p for p in wiring.problems)
    assert any("intentd-gate" in p for p in wiring.problems)
    # Gemini's timeout shorter than the hook's own deadline: Gemini would kill it and go on
    document = parse(path.read_text(), True).value
    del document["hooksConfig"]
    ours(document)["BeforeTool"][0]["timeout"] = 60_000
    path.write_text(json.dumps(document))
    (wiring,) = INSTALLER.inspect(scope)
    assert wiring.wired and len(wiring.problems) == 1 and "60000 ms" in wiring.problems[0]
    del ours(document)["BeforeTool"][0]["timeout"]  # Gemini's default: 60 s
    path.write_text(json.dumps(document))
    assert "60000 ms" in INSTALLER.inspect(scope)[0].problems[0]
    path.write_text(json.dumps({"hooks": {"BeforeTool": "nope"}}))
    assert INSTALLER.inspect(scope)[0].problems


def write_then_done() -> list[Turn]:
    return [Turn([call("write_file", file_path="src/new.py", content="x = 1\n")]),
            Turn([text("Done.")])]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("where", ["--workspace", "--user"])
def test_the_real_gemini_cli_runs_what_install_wrote(where: str, tmp_path: Path, ws: Path,
                                                     home: Path, short_dir: Path) -> None:
    """No daemon: Gemini runs intentd's gate from the installed settings, and it refuses."""
    program = installed(GEMINI)
    settings = make_home(home)
    settings.write_text("// Gemini reads comments; install keeps them\n" + settings.read_text())
    (ws / "src").mkdir()
    argv = [where, str(ws)] if where == "--workspace" else [where]
    assert run("install", "gemini", *argv, "--socket", str(short_dir / "none.sock")) == 0
    written = settings if where == "--user" else ws / ".gemini" / "settings.json"
    assert ours(parse(written.read_text(), True).value)["BeforeTool"]
    with FakeGeminiAPI(write_then_done()) as api:
        done = run_gemini(program, ws, environment(home, api.url, tmp_path / "state"), "write")
        results = api.function_responses()
    assert done.returncode == 0, done.stderr
    assert not (ws / "src" / "new.py").exists()
    assert [r["name"] for r in results] == ["write_file"]
    error = results[0]["response"]["error"]
    assert error.startswith("Tool execution blocked: intentd") and "intentd serve" in error
    assert "Invalid hook" not in done.stderr and "Discarding" not in done.stderr


@pytest.mark.timeout(600)
def test_a_hook_that_cannot_start_still_refuses_in_the_real_cli(
        tmp_path: Path, ws: Path, home: Path) -> None:
    """Gemini lets a call through when a hook exits 127 without a word on stdout, or exits 1
    (a Python that cannot import intentd): the guard turns both into exit 2 with a reason."""
    program = installed(GEMINI)
    make_home(home)
    (ws / "src").mkdir()
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'Traceback: no module named intentd' >&2\nexit 1\n")
    broken.chmod(0o755)
    for command in (str(tmp_path / "missing" / "intentd"), str(broken)):
        assert run("install", "gemini", "--user", "--command", command) == 0
        with FakeGeminiAPI(write_then_done()) as api:
            done = run_gemini(program, ws, environment(home, api.url, tmp_path / "state"), "w")
            results = api.function_responses()
        assert done.returncode == 0, done.stderr
        assert not (ws / "src" / "new.py").exists(), command
        assert "the hook could not run" in results[0]["response"]["error"]
        assert run("uninstall", "gemini", "--user") == 0
