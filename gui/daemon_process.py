"""Starting the daemon when none runs: an `intentd serve` in its own session, outliving the app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Held so the objects are not collected while the daemon runs (Python warns when they are).
_started: list[subprocess.Popen[bytes]] = []


def daemon_command(socket_path: Path) -> list[str]:
    return [sys.executable, "-m", "intentd.daemon.cli", "serve", "--socket", str(socket_path)]


def daemon_log_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state) / "intentd" / "daemon-started-by-gui.log"


def start_daemon(socket_path: Path) -> int | None:
    """Start it (it serves every app and agent, not just us) and return its pid, or None.

    A session of its own keeps it alive when the app's terminal closes; its output goes to a log
    file, never to our stdout/stderr, whose readers would otherwise wait on it after we exit.
    """
    log_path = daemon_log_path()
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            process = subprocess.Popen(daemon_command(socket_path), stdin=subprocess.DEVNULL,
                                       stdout=log, stderr=log, start_new_session=True)
    except OSError:
        return None
    _started.append(process)
    return process.pid
