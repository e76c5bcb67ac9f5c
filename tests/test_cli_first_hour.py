"""Small things a person meets in the first hour with the `intentd` command line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from intentd.daemon.agents.hooks.claude_tools import selection

INTENTD = [sys.executable, "-m", "intentd.daemon.cli"]


def intentd(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INTENTD, *args], capture_output=True, text=True, timeout=60,
                          **kwargs)  # type: ignore[call-overload]


def test_a_bad_flag_after_a_sub_command_prints_that_sub_commands_usage() -> None:
    for argv, usage in [(("status", "--bogus"), "usage: intentd status "),
                        (("hook", "select", "A", "--bogus"), "usage: intentd hook select "),
                        (("checkpoints", "list", "--bogus"), "usage: intentd checkpoints list ")]:
        out = intentd(*argv)
        assert out.returncode == 2, argv
        assert out.stderr.startswith(usage), out.stderr
        assert "unrecognized arguments: --bogus" in out.stderr


def test_hook_select_takes_socket_and_the_hook_still_sees_a_selection(workspace: Path) -> None:
    out = intentd("hook", "select", "INT-1", "--socket", "/nowhere/intentd.sock",
                  "--workspace", str(workspace))
    assert out.returncode == 0, out.stderr
    assert "INT-1" in out.stdout
    assert selection("intentd hook select INT-1 --socket /run/x.sock") == "INT-1"
    assert selection("intentd hook select INT-1 --socket=/run/x.sock") == "INT-1"
    assert selection("intentd hook select INT-1 --socket /x.sock && rm -rf /") is None


def test_serve_says_where_it_listens_once_it_answers(short_dir: Path, tmp_path: Path) -> None:
    path = short_dir / "run" / "intentd.sock"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    process = subprocess.Popen([*INTENTD, "serve", "--socket", str(path)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == f"intentd serve: listening on {path}\n"
        probe = socket.socket(socket.AF_UNIX)
        probe.connect(str(path))  # it answers by the time it says so
        probe.close()
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
    assert out == "", "one line, no more"


def test_serve_makes_only_its_own_folder_never_a_missing_parent(short_dir: Path) -> None:
    path = short_dir / "typo" / "run" / "intentd.sock"
    out = intentd("serve", "--socket", str(path))
    assert out.returncode == 1
    assert f"its parent {short_dir / 'typo'} does not exist" in out.stderr
    assert not (short_dir / "typo").exists()


def test_check_on_a_missing_workspace_is_an_error(tmp_path: Path) -> None:
    out = intentd("check", "--workspace", str(tmp_path / "nope"), input="")
    assert out.returncode == 2 and "is not a folder" in out.stderr
