"""An agent session opened through `intentd mcp` marks the MCP host as an agent, as hooks do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.testing import DaemonProcess
from tests.trust.agent_side import FAKE_AGENT, refused
from tests.trust.test_person_methods import PERSON_METHODS

FAKE_MCP_HOST = FAKE_AGENT.with_name("fake_mcp_host.py")


def test_a_process_under_the_host_of_intentd_mcp_is_refused(daemon: DaemonProcess,
                                                             ws: Path) -> None:
    """A host the name check does not know: before `intentd mcp` opens its session the host's
    children are the person's; while it serves, every person method is refused to them."""
    done = subprocess.run([sys.executable, str(FAKE_MCP_HOST), str(daemon.socket_path), str(ws)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert protocol.PERSON_ONLY not in found["before"].values(), found["before"]
    assert refused(found["after"]) == (len(PERSON_METHODS),) * 2, found["after"]
