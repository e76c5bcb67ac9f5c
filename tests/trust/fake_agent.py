"""A stand-in agent (not a known agent program): probes, runs the Claude Code hook, probes again.

`python fake_agent.py SOCKET WORKSPACE EVENT_JSON` prints {"before", "hook", "after"}: the
probe's answers (probe.py) from a child started before and after the hook named this process
to the daemon, and the hook's answer. The hook runs through `sh -c`, as agents run hooks.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

from probe import from_a_child  # beside this script, which runs as a program


def main() -> int:
    socket_path, workspace, event = sys.argv[1], sys.argv[2], sys.argv[3]
    before = from_a_child(socket_path, workspace)
    hook = f"{shlex.quote(sys.executable)} -m intentd.daemon.cli hook claude-code --socket " \
           f"{shlex.quote(socket_path)}"
    ran = subprocess.run(["sh", "-c", hook], input=event, capture_output=True, text=True,
                         timeout=60)
    answer = json.loads(ran.stdout) if ran.stdout.strip() else {"error": ran.stderr}
    after = from_a_child(socket_path, workspace)
    print(json.dumps({"before": before, "hook": answer, "after": after}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
