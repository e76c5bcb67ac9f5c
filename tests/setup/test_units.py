"""The unit texts: the command they run, escaping, and `systemd-analyze verify` where it exists."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from intentd.daemon.client import Client, DaemonUnavailable
from intentd.daemon.setup import units
from intentd.daemon.setup.units import (
    SERVICE_UNIT,
    SOCKET_UNIT,
    daemon_command,
    render_service,
    render_units,
)

ROOT = Path(__file__).resolve().parents[2]


def _value(text: str, key: str) -> str:
    return next(line.partition("=")[2] for line in text.splitlines() if line.startswith(key + "="))


def test_the_socket_is_private_and_where_clients_look() -> None:
    text = render_units(["/x/intentd"])[SOCKET_UNIT]
    assert _value(text, "ListenStream") == "%t/intentd/intentd.sock"
    assert _value(text, "SocketMode") == "0600" and _value(text, "DirectoryMode") == "0700"
    assert _value(text, "WantedBy") == "sockets.target"


def test_the_service_runs_serve_with_the_given_path() -> None:
    text = render_service(["/opt/intentd/bin/intentd"], path_env="/home/me/.local/bin:/usr/bin")
    assert _value(text, "ExecStart") == "/opt/intentd/bin/intentd serve"
    assert _value(text, "Environment") == "PATH=/home/me/.local/bin:/usr/bin"
    assert _value(text, "Requires") == SOCKET_UNIT and _value(text, "Also") == SOCKET_UNIT
    assert "Environment" not in render_service(["/x/intentd"])


def test_odd_paths_are_escaped_for_systemd() -> None:
    text = render_service(["/home/me/My Tools/100%/$HOME/intentd"], path_env="/a b:/c%d$e")
    assert _value(text, "ExecStart") == '"/home/me/My Tools/100%%/$$HOME/intentd" serve'
    # Environment= expands specifiers (%) but not variables ($).
    assert _value(text, "Environment") == '"PATH=/a b:/c%%d$e"'


def test_the_daemon_command_is_this_installations_intentd() -> None:
    command = daemon_command()
    assert Path(command[0]).is_absolute()
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("intentd ")


def test_without_a_script_the_daemon_runs_as_a_module(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert daemon_command() == [str(tmp_path / "python"), "-m", "intentd.daemon.cli"]


def test_packaged_units_are_the_rendered_ones() -> None:
    """packaging/systemd/ is the same text with /usr/bin/intentd: one source, no drift."""
    for name, text in units.packaged_units().items():
        assert (ROOT / "packaging" / "systemd" / name).read_text(encoding="utf-8") == text


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze is not installed (it comes with systemd)")
def test_systemd_analyze_verifies_the_installed_units(tmp_path: Path) -> None:
    folder = tmp_path / "user"
    folder.mkdir()
    for name, text in render_units(daemon_command(), os.environ.get("PATH")).items():
        (folder / name).write_text(text)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    done = subprocess.run(
        ["systemd-analyze", "--user", "verify", str(folder / SOCKET_UNIT),
         str(folder / SERVICE_UNIT)],
        capture_output=True, text=True, timeout=60, cwd=folder,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime), "SYSTEMD_LOG_LEVEL": "notice"})
    # verify reports a bad key or value as a warning with exit code 0: any output fails.
    assert done.returncode == 0, done.stderr
    assert not [line for line in (done.stdout + done.stderr).splitlines()
                if str(folder) in line or "intentd" in line], done.stderr


@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None,
                    reason="systemd-socket-activate is not installed (it comes with systemd)")
def test_the_service_command_serves_a_socket_systemd_hands_over(short_dir: Path,
                                                                 tmp_path: Path) -> None:
    """What systemd does on the first connection: run ExecStart with LISTEN_FDS=1."""
    command = shlex.split(_value(render_service(daemon_command()), "ExecStart"))
    path = short_dir / "intentd.sock"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    process = subprocess.Popen(["systemd-socket-activate", "-l", str(path), *command], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with Client(path, timeout=20) as client:
                    answer = client.initialize("test")
                break
            except DaemonUnavailable:
                assert process.poll() is None, process.communicate()[1]
                assert time.monotonic() < deadline, "nothing listened on the socket"
                time.sleep(0.05)
        assert answer["server"].startswith("intentd ") and answer["pid"] == process.pid
    finally:
        process.terminate()
        process.communicate(timeout=20)
