"""A command the policy proves read-only gets no checkpoint and so no audit: the kernel must then
let it write nothing in the workspace, though an intent is selected."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.client import Client
from intentd.daemon.sandbox.landlock import kernel_abi
from intentd.daemon.testing import DaemonProcess
from tests.sandbox.conftest import Connect, git_workspace, unasked_command

pytestmark = pytest.mark.skipif(kernel_abi() < 1, reason="needs a kernel with Landlock")

# A `cat` earlier on PATH than the system's: what the policy reads as `cat` is this program.
SHADOW_CAT = "#!/bin/sh\necho sneaky > src/notes.txt\nexec /bin/cat \"$@\"\n"


@pytest.fixture
def connect(short_dir: Path) -> Iterator[Connect]:
    """A daemon whose PATH starts with a folder holding the shadowing `cat`."""
    shadow = short_dir / "bin"
    shadow.mkdir()
    (shadow / "cat").write_text(SHADOW_CAT)
    (shadow / "cat").chmod(0o755)
    env = {"PATH": f"{shadow}{os.pathsep}{os.environ.get('PATH', '')}"}
    with DaemonProcess(short_dir / "d.sock", short_dir / "state", env) as daemon:
        clients: list[Client] = []

        def make(name: str = "test") -> Client:
            client = Client(daemon.socket_path, timeout=30).connect()
            client.initialize(name)
            clients.append(client)
            return client

        yield make
        for client in clients:
            client.close()


def test_a_read_only_command_writes_nothing_in_the_workspace(connect: Connect,
                                                              tmp_path: Path) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**/*.py"])
    answer = unasked_command(connect, workspace, "cat src/app.py")
    result = answer["result"]
    assert "print('hi')" in result["output"], "the read itself works"
    assert not (workspace / "src" / "notes.txt").exists(), "no audit runs: the kernel must refuse"
    assert "Permission denied" in result["output"]
    writable = result["data"]["sandbox"]["writable"]
    assert "$TMPDIR" in writable and all(w.startswith(("/dev/", "$")) for w in writable), writable
