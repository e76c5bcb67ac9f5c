"""The hook answers before Claude Code's timeout (which would let the call through), and it
only connects to the daemon when a call needs it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.state import StateFile
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.conftest import SilentDaemon
from tests.agents.test_claude_hook import SESSION, Hook, event

HOOK_TIMEOUT = 4.0  # the hook's deadline is then 3 s (a quarter kept as margin)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", files={"README.md": "# r\n"})


def timed_pre(hook: Hook) -> tuple[str, str, float]:
    """A write, timed."""
    started = time.monotonic()
    verdict, reason = hook.pre("Write", {"file_path": str(hook.ws / "src/a.py"), "content": "x"})
    return verdict, reason, time.monotonic() - started


def test_a_keeper_that_never_comes_up_is_denied_before_the_timeout(
        silent: SilentDaemon, ws: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the keeper connects to a daemon that never answers, so it never prints its session
    hook = Hook(silent.path, ws, monkeypatch, capsys, "--hook-timeout", str(HOOK_TIMEOUT))
    verdict, reason, took = timed_pre(hook)
    assert verdict == "deny" and "ran out of its 3 s" in reason and "keeper" in reason, reason
    assert took < HOOK_TIMEOUT - 0.5


def test_a_state_file_locked_by_another_process_is_denied_before_the_timeout(
        short_dir: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    lock_path = StateFile("claude-code", SESSION).lock_path
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
         str(lock_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        hook = Hook(short_dir / "none.sock", ws, monkeypatch, capsys,
                    "--hook-timeout", str(HOOK_TIMEOUT))
        verdict, reason, took = timed_pre(hook)
    finally:
        holder.kill()
        holder.wait()
    assert verdict == "deny" and "state file" in reason, reason
    assert took < HOOK_TIMEOUT - 0.5


def test_an_approval_timeout_longer_than_the_hook_is_cut_to_fit(
        daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(daemon.socket_path, ws, monkeypatch, capsys, "--hook-timeout", str(HOOK_TIMEOUT),
                "--approval-timeout", "1000")
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"})[0] == "allow"
    away = Client(daemon.socket_path).connect()  # an approver is connected; nobody at it
    away.initialize("intentd-gui away")
    away.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    try:
        verdict, reason, took = timed_pre(hook)  # nobody answers the approval
    finally:
        away.close()
    assert verdict == "deny" and "no person answered within" in reason, reason
    assert took < HOOK_TIMEOUT - 0.5


def test_calls_that_need_no_daemon_do_not_connect(
        silent: SilentDaemon, ws: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(silent.path, ws, monkeypatch, capsys)
    started = time.monotonic()
    assert hook(event("PreToolUse", "TodoWrite", {"todos": []}, ws)) == {}
    assert hook(event("PreToolUse", "mcp__intentd__write_to_file", {"path": "src/a.py"}, ws)) == {}
    assert hook(event("PostToolUse", "Read", {"file_path": "README.md"}, ws, use_id="never")) == {}
    assert capsys.readouterr().err == ""
    assert silent.connections() == 0 and time.monotonic() - started < 2


def test_a_call_reads_the_state_once_besides_recording_it(
        daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(daemon.socket_path, ws, monkeypatch, capsys)
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"})[0] == "allow"
    reads: list[Any] = []
    real_read = StateFile.read

    def counted(self: StateFile) -> Any:
        reads.append(self.path)
        return real_read(self)

    monkeypatch.setattr(StateFile, "read", counted)
    assert hook.pre("Read", {"file_path": str(ws / "README.md")})[0] == "allow"
    assert len(reads) == 2  # the session to use, then the pending call under the lock
