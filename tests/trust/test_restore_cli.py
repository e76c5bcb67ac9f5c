"""`intentd checkpoints restore` goes through the daemon, which refuses an agent's process: the
command then restores nothing itself, so the ledger's refusal is what happened."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.trust.agent_side import run_command, session


def test_a_restore_the_daemon_refuses_is_not_done_behind_its_back(short_dir: Path,
                                                                  ws: Path) -> None:
    runtime = short_dir / "run"
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime), "XDG_STATE_HOME": str(short_dir / "state")}
    socket_path = runtime / "intentd" / "intentd.sock"
    with DaemonProcess(socket_path, short_dir / "state", extra_env=env):
        with Client(socket_path, timeout=30) as client:
            client.initialize("test")
            session_id = session(client, ws)
            written = run_command(client, session_id, "cp src/app.py src/new.py")
            checkpoint_id = written["checkpoint_id"]
        assert checkpoint_id, written
        restore = [sys.executable, "-m", "intentd.daemon.cli", "checkpoints", "restore",
                   "--workspace", str(ws), checkpoint_id]
        spawn = f"import subprocess, sys; sys.exit(subprocess.call({restore!r}))"
        # run by a process whose program name is a known agent's: the agent's side
        done = subprocess.run(["bash", "-c", f"exec -a claude {shlex.quote(sys.executable)} -c "
                               f"{shlex.quote(spawn)}"], capture_output=True, text=True,
                              timeout=120, env={**os.environ, **env}, cwd=ws)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the daemon refused" in done.stderr
    assert "restored" not in done.stdout
    assert (ws / "src" / "new.py").exists(), "the restore went ahead without the daemon"
