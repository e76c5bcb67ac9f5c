"""The daemon never serves from a socket folder it cannot vouch for, and says what to do instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trust.spoof import OTHER_UID


def serve(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`intentd serve`, which must give up at once (a daemon that starts is killed by timeout)."""
    return subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "serve", *args],
                          capture_output=True, text=True, timeout=30, env=env)


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder of another user needs root")
def test_the_default_folder_in_tmp_made_by_another_user_is_refused(short_dir: Path) -> None:
    """No XDG_RUNTIME_DIR: /tmp/intentd-$UID, which another user can create first."""
    folder = short_dir / f"intentd-{os.getuid()}"
    folder.mkdir(mode=0o700)
    os.chown(folder, OTHER_UID, -1)
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    done = serve({**env, "TMPDIR": str(short_dir), "XDG_STATE_HOME": str(short_dir / "state")})
    assert done.returncode == 1
    assert f"{folder} belongs to another user (uid {OTHER_UID})" in done.stderr
    assert "XDG_RUNTIME_DIR" in done.stderr and "--socket" in done.stderr, \
        "the message says what to do"
    assert os.listdir(folder) == [], "nothing was bound there"


def test_a_socket_folder_that_is_a_link_is_refused(short_dir: Path) -> None:
    (short_dir / "elsewhere").mkdir(mode=0o700)
    (short_dir / "run").symlink_to(short_dir / "elsewhere")
    env = {**os.environ, "XDG_STATE_HOME": str(short_dir / "state")}
    done = serve(env, "--socket", str(short_dir / "run" / "intentd.sock"))
    assert done.returncode == 1
    assert "is not a plain folder" in done.stderr and "--socket" in done.stderr, done.stderr
    assert os.listdir(short_dir / "elsewhere") == [], "nothing was bound there"
