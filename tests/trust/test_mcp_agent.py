"""An agent session opened through `intentd mcp` marks the MCP host as an agent, as hooks do."""

from __future__ import annotations

from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.testing import DaemonProcess
from tests.trust.agent_side import refused, under_mcp_host
from tests.trust.test_person_methods import PERSON_METHODS


def test_a_process_under_the_host_of_intentd_mcp_is_refused(daemon: DaemonProcess,
                                                             ws: Path) -> None:
    """A host the name check does not know: before `intentd mcp` opens its session the host's
    children are the person's; while it serves, every person method is refused to them."""
    found = under_mcp_host(daemon.socket_path, ws)
    assert protocol.PERSON_ONLY not in found["before"].values(), found["before"]
    assert refused(found["after"]) == (len(PERSON_METHODS),) * 2, found["after"]
