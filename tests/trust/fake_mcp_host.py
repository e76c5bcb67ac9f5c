"""A stand-in MCP host (not a known agent program): probes, starts `intentd mcp`, probes again.

`python fake_mcp_host.py SOCKET WORKSPACE` prints {"before", "after"}: the probe's answers
(probe.py) from a child started before `intentd mcp` opened its session, and from one started
while it serves, as an agent's own shell command would be.
"""

from __future__ import annotations

import json
import subprocess
import sys

from probe import from_a_child  # beside this script, which runs as a program


def main() -> int:
    socket_path, workspace = sys.argv[1], sys.argv[2]
    before = from_a_child(socket_path, workspace)
    server = subprocess.Popen([sys.executable, "-m", "intentd.daemon.cli", "mcp", "--socket",
                               socket_path, "--workspace", workspace],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert server.stderr is not None and server.stdin is not None
    serving = server.stderr.readline()  # "intentd mcp: serving ...": its session is open
    after = from_a_child(socket_path, workspace) if "serving" in serving else {"error": serving}
    server.stdin.close()
    server.wait(30)
    print(json.dumps({"before": before, "after": after}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
