"""No client talks to a socket that is not the user's own daemon: nothing is sent to it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.approver import auto_approve
from intentd.daemon.agents.gateway import GatewayError, open_gateway
from intentd.daemon.cli import main
from intentd.daemon.client import Client, UntrustedDaemon
from intentd.daemon.testing import make_workspace
from tests.trust.spoof import OTHER_UID, Planted, plant, scenarios

SCENARIOS = scenarios(Path("/"))


@pytest.fixture(params=sorted(SCENARIOS))
def planted(request: pytest.FixtureRequest, short_dir: Path) -> Iterator[Planted]:
    spoof = plant(short_dir / "run", **SCENARIOS[request.param])  # type: ignore[arg-type]
    yield spoof
    spoof.stop()


def test_the_library_client_refuses_before_sending(planted: Planted) -> None:
    with pytest.raises(UntrustedDaemon) as caught:
        Client(planted.socket_path, timeout=5).connect().initialize("cli")
    assert "refusing to talk to" in str(caught.value)
    assert planted.bytes_received() == 0


def test_the_cli_refuses_with_a_clear_message(planted: Planted) -> None:
    done = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "approve", "a-1",
                           "--socket", str(planted.socket_path)], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 1 and "refusing to talk to" in done.stderr
    assert planted.bytes_received() == 0


def test_the_hook_denies_even_a_read(planted: Planted, short_dir: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_workspace(short_dir / "ws", files={"README.md": "# hi\n"})
    for tool, tool_input in (("Read", {"file_path": str(ws / "README.md")}),
                             ("Bash", {"command": "rm -rf ~ /"})):
        event = {"session_id": f"s-{tool}", "cwd": str(ws), "hook_event_name": "PreToolUse",
                 "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_1"}
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(event).encode())))
        assert main(["hook", "claude-code", "--socket", str(planted.socket_path),
                     "--workspace", str(ws)]) == 0
        out = json.loads(capsys.readouterr().out)["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny" and "refusing to talk to" in \
            out["permissionDecisionReason"]
    assert planted.bytes_received() == 0


def test_agents_runners_refuse_instead_of_falling_back(planted: Planted, short_dir: Path) -> None:
    """`intentd mcp`, `run` and `demo` open their pipeline through the gateway."""
    ws = make_workspace(short_dir / "ws")
    with pytest.raises(GatewayError, match="refusing to talk to"):
        open_gateway(ws, "mcp", socket_path=planted.socket_path, approver=auto_approve("test"))
    assert planted.bytes_received() == 0


@pytest.mark.skipif(os.getuid() != 0, reason="planting in /tmp as another user needs root here")
def test_the_default_path_in_tmp_planted_by_another_user(
        short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No XDG_RUNTIME_DIR: /tmp/intentd-$UID, which another user can create first."""
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setattr(tempfile, "tempdir", str(short_dir))
    spoof = plant(short_dir / f"intentd-{os.getuid()}", folder_uid=OTHER_UID)
    try:
        assert protocol.default_socket_path() == spoof.socket_path
        with pytest.raises(UntrustedDaemon, match="belongs to uid"):
            Client().connect()
        assert spoof.bytes_received() == 0
    finally:
        spoof.stop()


def test_the_real_daemon_passes_the_checks(short_dir: Path) -> None:
    """The control: the same checks let the user's own daemon through."""
    from intentd.daemon.testing import DaemonProcess

    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as daemon, \
            Client(daemon.socket_path, timeout=10) as client:
        answer: dict[str, Any] = client.initialize("test")
        assert answer["protocol_version"] == protocol.PROTOCOL_VERSION
