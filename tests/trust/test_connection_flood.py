"""An agent's command that floods the daemon with connections is refused past a limit, and the
person can still reach the daemon meanwhile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.server.server import agent_side_limit
from intentd.daemon.testing import DaemonProcess

FLOOD = Path(__file__).parent / "flood.py"


def flood(daemon: DaemonProcess, count: int) -> tuple[subprocess.Popen[str], dict[str, int]]:
    """A process on an agent's side (it runs in Claude Code's environment) holding `count`
    connections, and what became of them."""
    process = subprocess.Popen([sys.executable, str(FLOOD), str(daemon.socket_path), str(count)],
                               env={**os.environ, "CLAUDECODE": "1"}, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdout is not None
    return process, json.loads(process.stdout.readline())


def test_a_flood_from_agents_side_is_refused_past_the_limit_and_the_person_gets_in(
        daemon: DaemonProcess) -> None:
    limit = agent_side_limit()
    holder, held = flood(daemon, limit + 20)
    try:
        assert held == {"served": limit, "refused": 20}
        with Client(daemon.socket_path) as person:
            assert person.call(protocol.WORKSPACES_LIST, {}) is not None
    finally:
        holder.communicate("")
    other, got = flood(daemon, 1)  # once the flood's connections close, an agent gets in again
    other.communicate("")
    assert got == {"served": 1, "refused": 0}
