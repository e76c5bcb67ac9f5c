"""An agent's command that floods the daemon with connections is refused past a limit, and the
person can still reach the daemon meanwhile."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

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


def descriptor_limit(pid: int) -> int:
    """The process's soft limit of open files, as /proc shows it."""
    line = next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines()
                if line.startswith("Max open files"))
    return int(line.split()[3])


def test_a_flood_from_agents_side_is_refused_past_the_limit_and_the_person_gets_in(
        daemon: DaemonProcess) -> None:
    assert daemon.process is not None
    limit = agent_side_limit(descriptor_limit(daemon.process.pid))
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


def test_the_daemon_takes_the_descriptors_its_hard_limit_allows(short_dir: Path) -> None:
    """Started with a desktop's small soft limit, the daemon raises it: agents' workspaces and
    connections would otherwise run it out of descriptors, and the person's app out of it."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if want <= 256:
        pytest.skip("the hard limit leaves nothing to raise")
    socket_path = short_dir / "d.sock"
    process = subprocess.Popen(
        [sys.executable, "-m", "intentd.daemon.cli", "serve", "--socket", str(socket_path)],
        env={**os.environ, "XDG_STATE_HOME": str(short_dir / "state")},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)))
    try:
        assert process.stdout is not None
        assert b"listening" in process.stdout.readline()
        assert descriptor_limit(process.pid) == want
    finally:
        process.terminate()
        process.communicate(timeout=30)
