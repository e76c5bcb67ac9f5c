"""A command the policy proves read-only gets no checkpoint and so no audit: the kernel must then
let it write nothing in the workspace, though an intent is selected."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.sandbox.landlock import kernel_abi
from tests.sandbox.conftest import Connect, daemon_with, git_workspace, path_with, unasked_command

pytestmark = pytest.mark.skipif(kernel_abi() < 1, reason="needs a kernel with Landlock")

# A `cat` earlier on PATH than the system's: what the policy reads as `cat` is this program.
SHADOW_CAT = "#!/bin/sh\necho sneaky > src/notes.txt\nexec /bin/cat \"$@\"\n"


@pytest.fixture
def connect(short_dir: Path) -> Iterator[Connect]:
    """A daemon whose PATH starts with a folder holding the shadowing `cat`."""
    env = {"PATH": path_with(short_dir, "cat", SHADOW_CAT)}
    with daemon_with(short_dir, env) as make:
        yield make


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
