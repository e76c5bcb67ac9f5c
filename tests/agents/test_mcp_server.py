"""`intentd mcp` driven by the mcp SDK's own client over stdio, through a real daemon."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from intentd.daemon import protocol
from intentd.daemon.agents import gateway
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from intentd.daemon.tools.registry import BUILTIN_TOOLS
from tests.agents.conftest import Person, SilentDaemon

# The agent that starts `intentd mcp`: the server names its parent to the daemon as an agent
# process, so it must not be this test process, which also answers as the person.
AGENT_HOST = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


def server_params(ws: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-c", AGENT_HOST, sys.executable, "-m", "intentd.daemon.cli",
                                      "mcp", "--workspace", str(ws), *extra],
        env={name: os.environ[name] for name in ("XDG_STATE_HOME", "XDG_RUNTIME_DIR")})


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def session_calls(params: StdioServerParameters,
                        calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any]]:
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                listing = await session.list_tools()
                results = [await session.call_tool(name, args) for name, args in calls]
    return (init, listing), results


def test_tools_annotations_and_a_gated_write_through_the_daemon(
        tmp_path: Path, daemon: DaemonProcess, person: Person) -> None:
    ws = make_workspace(tmp_path / "ws", files={"src/app.py": "x = 1\n"})
    calls = [("write_to_file", {"path": "src/new.py", "content": "y = 2\n"}),
             ("select_active_intent", {"intent_id": "INT-1"}),
             ("write_to_file", {"path": "src/new.py", "content": "y = 2\n"}),
             ("write_to_file", {"path": "docs/out.md", "content": "no"}),
             ("read_file", {"path": "src/app.py"})]
    (init, listing), results = anyio.run(
        session_calls, server_params(ws, "--socket", str(daemon.socket_path)), calls)
    tools = {tool.name: tool for tool in listing.tools}
    assert set(tools) == set(BUILTIN_TOOLS)
    assert tools["read_file"].annotations.read_only_hint is True
    assert tools["read_file"].annotations.destructive_hint is False
    for name in ("write_to_file", "replace_in_file", "execute_command"):
        assert tools[name].annotations.destructive_hint is True
        assert tools[name].annotations.read_only_hint is False
    assert tools["select_active_intent"].annotations.read_only_hint is True
    hints = {name: (t.annotations.idempotent_hint, t.annotations.open_world_hint)
             for name, t in tools.items()}
    assert hints["execute_command"] == (False, True), "a command may reach the network"
    assert hints["write_to_file"] == (True, False), "the same content twice changes nothing more"
    assert hints["replace_in_file"] == (False, False)
    assert hints["read_file"][1] is False and hints["search_files"][1] is False
    assert tools["write_to_file"].input_schema["required"] == ["path", "content"]
    assert "INT-1" in (init.instructions or "")
    refused, selected, written, outside, read = results
    assert refused.is_error and GATE_MESSAGE in text_of(refused)
    assert not selected.is_error and "<intent_context>" in text_of(selected)
    assert not written.is_error and (ws / "src" / "new.py").read_text() == "y = 2\n"
    assert [a["tool"] for a in person.seen] == ["write_to_file"], "the person approved the write"
    assert outside.is_error and "scope" in text_of(outside)
    assert not read.is_error and text_of(read) == "x = 1\n"
    with Client(daemon.socket_path) as client:
        entries = client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"]
    assert [e["intent"]["agent"] for e in entries] == ["mcp"] * 5
    assert entries[2]["approved_by"] == "person" and entries[2]["receipt"]["checkpoint_id"]


def test_without_a_daemon_calls_needing_a_person_are_refused(tmp_path: Path,
                                                             short_dir: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    calls = [("select_active_intent", {"intent_id": "INT-1"}),
             ("write_to_file", {"path": "src/new.py", "content": "y"}),
             ("list_files", {})]
    _, (selected, write, listing) = anyio.run(
        session_calls, server_params(ws), calls)  # the default socket: nobody there
    assert not selected.is_error
    assert write.is_error and "no intentd daemon is running" in text_of(write)
    assert not (ws / "src" / "new.py").exists()
    assert not listing.is_error


def test_an_explicit_socket_without_a_daemon_is_a_clear_error(tmp_path: Path,
                                                              short_dir: Path) -> None:
    import subprocess

    ws = make_workspace(tmp_path / "ws")
    command = [sys.executable, "-m", "intentd.daemon.cli", "mcp", "--workspace", str(ws),
               "--socket", str(short_dir / "none.sock")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and done.stdout == ""
    assert "no intentd daemon answers at" in done.stderr


def test_a_daemon_that_never_answers_is_a_clear_error(
        tmp_path: Path, silent: SilentDaemon, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gateway, "HANDSHAKE_TIMEOUT", 0.5)
    ws = make_workspace(tmp_path / "ws")
    assert main(["mcp", "--workspace", str(ws), "--socket", str(silent.path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.strip().splitlines() == [
        f"intentd mcp: the intentd daemon at {silent.path} took the connection but did not "
        "answer within 0.5 s; is it stuck? (restart `intentd serve`)"]


@pytest.fixture(autouse=True)
def _no_runtime_dir(monkeypatch: pytest.MonkeyPatch, short_dir: Path) -> None:
    """The 'default' socket of these tests is a private folder where no daemon runs."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(short_dir))
