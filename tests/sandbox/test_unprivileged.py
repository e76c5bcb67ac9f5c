"""Confinement needs no root: the same rules hold for an ordinary user (here uid 65534)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.sandbox.confine import SandboxRequest, confine
from intentd.daemon.sandbox.landlock import kernel_abi

pytestmark = pytest.mark.skipif(kernel_abi() < 4, reason="needs Landlock with TCP rules")
NOBODY = 65534
SCRIPT = ("for t in src/in.txt docs/out.txt .orchestration/x .git/x; do "
          "echo x > $t 2>/dev/null && echo wrote $t; done; echo x > $TMPDIR/t && echo wrote tmp")


@pytest.fixture
def plain_workspace() -> Iterator[Path]:
    """Outside root's private temp folders, so an ordinary user can reach it."""
    root = Path(tempfile.mkdtemp(prefix="itd-nobody-", dir="/tmp"))
    for folder in ("src", "docs", ".orchestration", ".git"):
        (root / folder).mkdir()
    if os.getuid() == 0:
        for path in [root, *root.iterdir()]:
            os.chown(path, NOBODY, NOBODY)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def run_confined(root: Path) -> dict[str, Any]:
    """Confine and run SCRIPT in this process's child; as uid 65534 when we are root."""
    confinement = confine(SandboxRequest(str(root), ("src/**",)))
    try:
        proc = confinement.spawn(lambda: subprocess.Popen(
            ["bash", "-c", SCRIPT], cwd=root, stdout=subprocess.PIPE, text=True,
            env={**os.environ, **confinement.env()}))
        return {"uid": os.getuid(), "out": proc.communicate(timeout=30)[0]}
    finally:
        confinement.close()


def as_nobody(root: Path) -> dict[str, Any]:
    """Fork, drop to uid 65534 (no capabilities left), confine and run there."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.write(write, json.dumps(run_confined(root)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return dict(json.loads(data))


def test_an_ordinary_user_is_confined_the_same(plain_workspace: Path) -> None:
    answer = as_nobody(plain_workspace) if os.getuid() == 0 else run_confined(plain_workspace)
    assert answer["uid"] != 0
    assert answer["out"].split("\n")[:-1] == ["wrote src/in.txt", "wrote tmp"]
    assert (plain_workspace / "src" / "in.txt").exists()
    assert not (plain_workspace / "docs" / "out.txt").exists()
