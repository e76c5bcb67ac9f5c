"""`intentd hook install|uninstall cline`: hook files in Cline's hooks folder, the person's own
hooks left byte for byte, and the installed file refusing when intentd cannot answer."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from intentd.daemon.agents.hooks.cline_install import (
    EVENTS,
    INSTALLER,
    MARKER,
    hooks_folder,
    script,
)
from intentd.daemon.agents.hooks.install import HookCommand, Scope
from intentd.daemon.cli import main
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.test_cline_hook import fixture, in_session

THEIRS = {  # the person's own files beside intentd's: none may change by a byte
    "hooks/PreToolUse.sh": "#!/bin/bash\necho '{\"cancel\": false}'  # mine\n",
    "hooks/UserPromptSubmit": "#!/bin/sh\ncat >/dev/null\necho '{\"cancel\":false}'\n",
    "hooks/notes.txt": "no newline at the end",
    "rules.md": "# Use tabs\r\n",
}


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(folder.rglob("*")) if p.is_file()}


def plant(rules: Path) -> dict[str, tuple[bytes, int]]:
    for name, text in THEIRS.items():
        path = rules / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
        path.chmod(0o755 if "hooks/" in name and not name.endswith(".txt") else 0o644)
    return snapshot(rules)


def run(*argv: str) -> int:
    return main(["hook", *argv])


def test_install_then_uninstall_leaves_the_persons_hooks_byte_for_byte(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_workspace(tmp_path / "proj")
    rules = ws / ".clinerules"
    before = plant(rules)
    assert run("install", "cline", "--workspace", str(ws), "--socket", "/run/x/intentd.sock") == 0
    after = snapshot(rules)
    for event in EVENTS:
        body, mode = after.pop(f"hooks/{event}")
        assert mode == 0o755 and MARKER.encode() in body  # Cline runs only executable files
        assert f"hook cline {event} --socket /run/x/intentd.sock".encode() in body
    assert after == before
    capsys.readouterr()
    assert run("install", "cline", "--workspace", str(ws), "--socket", "/run/x/intentd.sock") == 0
    assert capsys.readouterr().out.count(": unchanged") == len(EVENTS)  # idempotent
    assert run("uninstall", "cline", "--workspace", str(ws)) == 0
    assert snapshot(rules) == before
    assert run("uninstall", "cline", "--workspace", str(ws)) == 0
    assert "nothing of intentd's" in capsys.readouterr().out


def test_the_user_level_folder_both_cline_hosts_read(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = tmp_path / "home" / "Documents" / "Cline" / "Hooks"
    assert hooks_folder(Scope(None, tmp_path / "home")) == folder
    assert run("install", "cline", "--user") == 0
    assert sorted(p.name for p in folder.iterdir()) == sorted(EVENTS)
    assert run("uninstall", "cline", "--user") == 0
    assert list(folder.iterdir()) == []


def test_a_hook_of_the_persons_own_is_never_overwritten(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_workspace(tmp_path / "proj")
    rules = ws / ".clinerules"
    (rules / "hooks").mkdir(parents=True)
    (rules / "hooks" / "PreToolUse").write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
    before = snapshot(rules)
    assert run("install", "cline", "--workspace", str(ws)) == 1
    error = capsys.readouterr().err
    assert "PreToolUse" in error and "does not overwrite" in error and "PreToolUse.sh" in error
    assert snapshot(rules) == before  # nothing written, not even the other events' files
    assert run("uninstall", "cline", "--workspace", str(ws)) == 0
    assert snapshot(rules) == before  # and uninstall does not take theirs for ours


def test_dry_run_writes_nothing_and_doctor_sees_the_wiring(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_workspace(tmp_path / "proj")
    assert run("install", "cline", "--workspace", str(ws), "--dry-run") == 0
    assert "would be written" in capsys.readouterr().out
    assert not (ws / ".clinerules").exists()
    scope = Scope(ws, tmp_path)
    assert INSTALLER.inspect(scope) == []
    assert run("install", "cline", "--workspace", str(ws)) == 0
    wiring = INSTALLER.inspect(scope)
    assert [w.path.name for w in wiring] == list(EVENTS)
    assert all(w.wired and not w.problems for w in wiring)
    user = Scope(None, tmp_path)
    changes = INSTALLER.install(user, HookCommand(("intentd",)))
    for change in changes:
        change.path.parent.mkdir(parents=True, exist_ok=True)
        change.path.write_text(str(change.text))
    assert "also installed in" in INSTALLER.inspect(scope)[0].problems[0]  # asked twice
    for change in changes:
        change.path.unlink()
    assert INSTALLER.inspect(scope)[0].problems == ()
    (ws / ".clinerules" / "hooks" / "PreToolUse").chmod(0o644)
    assert "not executable" in INSTALLER.inspect(scope)[0].problems[0]
    (ws / ".clinerules" / "hooks" / "PreToolUse").unlink()
    assert "PreToolUse missing" in INSTALLER.inspect(scope)[-1].problems[0]


def test_the_installed_file_refuses_when_intentd_cannot_answer(tmp_path: Path,
                                                              daemon: DaemonProcess) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    payload = json.dumps(in_session(fixture("cli/PreToolUse-editor_create", ws), "s1"))
    folder = tmp_path / "hooks"
    folder.mkdir()

    def answer(command: HookCommand, event: str = "PreToolUse") -> dict[str, object]:
        path = folder / event
        path.write_text(script(command, event))
        # as Cline CLI 3 runs it: the interpreter of its #! line, the payload on stdin
        done = subprocess.run(["sh", str(path)], input=payload, capture_output=True, text=True,
                              cwd=ws, timeout=60, env={**os.environ, "PATH": os.environ["PATH"]})
        lines = done.stdout.strip().splitlines()
        assert len(lines) == 1, done.stdout  # one JSON object: all Cline reads
        found: dict[str, object] = json.loads(lines[0])
        return found

    gone = answer(HookCommand(("/nonexistent/intentd",)))
    assert gone["cancel"] is True and "could not answer" in str(gone["errorMessage"])
    crashing = answer(HookCommand(("python3", "-c", "import sys; sys.exit(1)")))
    assert crashing["cancel"] is True
    assert answer(HookCommand(("/nonexistent/intentd",)), "PostToolUse") == {"cancel": False}
    working = answer(HookCommand.detect(daemon.socket_path))
    assert working["cancel"] is True and "Intent ID" in str(working["errorMessage"])
