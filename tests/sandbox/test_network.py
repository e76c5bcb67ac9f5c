"""TCP from commands: refused to commands that run unasked under `network: deny`, allowed otherwise."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.sandbox.landlock import kernel_abi
from tests.sandbox.conftest import Connect, approved_command, git_workspace, unasked_command

pytestmark = pytest.mark.skipif(kernel_abi() < 4, reason="needs Landlock TCP rules (ABI 4)")

UNASKED = {"auto_approve": {"all_commands": True}}


@pytest.fixture
def server() -> Iterator[int]:
    """A TCP server on loopback; connecting needs no accept (the kernel's backlog answers)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


def connect_command(port: int) -> str:
    return (f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)"
            f"; print('connected')\"")


def output(answer: dict[str, Any]) -> str:
    return str(answer["result"]["output"])


def test_an_unasked_command_cannot_connect_under_deny(connect: Connect, tmp_path: Path,
                                                       server: int) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**"], {**UNASKED, "sandbox": {"network": "deny"}})
    answer = unasked_command(connect, workspace, connect_command(server))
    assert "connected" not in output(answer) and "PermissionError" in output(answer)
    assert answer["result"]["data"]["sandbox"]["network"] == "deny"


def test_deny_is_the_default_for_unasked_commands(connect: Connect, tmp_path: Path,
                                                  server: int) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**"], UNASKED)
    assert "PermissionError" in output(unasked_command(connect, workspace, connect_command(server)))


def test_an_unasked_command_connects_under_allow(connect: Connect, tmp_path: Path,
                                                 server: int) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**"], {**UNASKED, "sandbox": {"network": "allow"}})
    answer = unasked_command(connect, workspace, connect_command(server))
    assert "connected" in output(answer) and answer["result"]["ok"]


def test_a_persons_approval_allows_that_call_to_connect(connect: Connect, workspace: Path,
                                                         server: int) -> None:
    answer = approved_command(connect, workspace, connect_command(server))
    assert "connected" in output(answer)
    assert answer["result"]["data"]["sandbox"]["network"] == "allow"
