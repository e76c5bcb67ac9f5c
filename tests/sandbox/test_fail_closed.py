"""Where Landlock is there but a command's confinement cannot be built, the command does not run:
it is never run unconfined instead."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from intentd.daemon.sandbox.landlock import kernel_abi

pytestmark = pytest.mark.skipif(kernel_abi() < 1, reason="needs a kernel with Landlock")

# In a child process: no file descriptor left (RLIMIT_NOFILE at the lowest free number), so the
# kernel refuses landlock_create_ruleset (EMFILE); then the command is asked to run.
CHILD = """
import json, os, resource, sys
from intentd.daemon.sandbox.confine import SandboxRequest
from intentd.daemon.tools.base import ToolContext
from intentd.daemon.tools.command import execute_command
root = sys.argv[1]
ctx = ToolContext(root, (), root, lambda _id: None, lambda _p: False, SandboxRequest(root, ("**",)))
open_fds = {int(name) for name in os.listdir("/proc/self/fd")}
lowest_free = next(n for n in range(1024) if n not in open_fds)
resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
result = execute_command(ctx, {"command": "echo ran > marker"})
print(json.dumps({"ok": result.ok, "output": result.output, "data": result.data}))
"""


def test_a_confinement_that_cannot_be_built_runs_nothing(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert not result["ok"] and result["output"].startswith("not run: ")
    assert "Landlock confinement could not be built" in result["output"], result["output"]
    assert result["data"]["sandbox"]["confined"] is False and result["data"]["sandbox"]["error"]
    assert not (tmp_path / "marker").exists()
