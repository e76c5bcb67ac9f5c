"""A stuck tool: other sessions are still answered, and SIGTERM still stops the daemon in time."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace
from tests.robustness.helpers import open_session, wait_until

Connect = Callable[[str], Client]
STOP_SECONDS = 5  # documented: SIGTERM stops the daemon within this, whatever is running


@pytest.fixture
def stuck_ws(tmp_path: Path) -> Path:
    """Every write waits on a pre-hook that sleeps (for as long as its generous timeout)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    return make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy={
        "auto_approve": {"edit": True},
        "hooks": {"pre_tool": [{"command": f"echo $$ > {marks}/$$; exec sleep 120",
                                "timeout": 300, "matcher": "write_to_file"}]}},
        files={"a.txt": "a\n"})


def hook_pids(ws: Path) -> list[int]:
    return [int(p.name) for p in (ws.parent / "marks").iterdir()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def test_a_session_with_stuck_calls_never_blocks_another(connect: Connect, stuck_ws: Path) -> None:
    stuck = connect("stuck-agent")
    session_id = open_session(stuck, stuck_ws)
    for index in range(12):  # more than any thread pool the daemon keeps
        stuck.send(protocol.request(protocol.TOOLS_CALL, {
            "session_id": session_id, "tool": "write_to_file",
            "args": {"path": f"f{index}.txt", "content": "x"}}, id=100 + index))
    wait_until(lambda: len(hook_pids(stuck_ws)) >= 1, what="a stuck hook")
    other = connect("other-agent")
    other_session = open_session(other, stuck_ws)
    for _ in range(3):
        started = time.monotonic()
        answer = other.call(protocol.TOOLS_CALL, {"session_id": other_session, "tool": "read_file",
                                                  "args": {"path": "a.txt"}}, timeout=10)
        assert answer["result"]["output"] == "a\n" and time.monotonic() - started < 5
    assert len(hook_pids(stuck_ws)) == 4, "one session holds at most 4 tool threads at once"


def test_sigterm_stops_the_daemon_in_time_with_tools_stuck(short_dir: Path, stuck_ws: Path) -> None:
    daemon = DaemonProcess(short_dir / "d.sock", short_dir / "state").start()
    try:
        client = Client(daemon.socket_path, timeout=20).connect()
        session_id = open_session(client, stuck_ws)
        for index in range(3):
            client.send(protocol.request(protocol.TOOLS_CALL, {
                "session_id": session_id, "tool": "write_to_file",
                "args": {"path": f"f{index}.txt", "content": "x"}}, id=100 + index))
        wait_until(lambda: len(hook_pids(stuck_ws)) == 3, what="three stuck hooks")
        assert daemon.process is not None
        started = time.monotonic()
        daemon.process.send_signal(signal.SIGTERM)
        daemon.process.wait(timeout=STOP_SECONDS + 10)
        took = time.monotonic() - started
        print(f"SIGTERM to exit with 3 tools stuck: {took:.2f} s")
        assert took < STOP_SECONDS, f"the daemon took {took:.1f} s to stop"
        assert not daemon.socket_path.exists(), "it stopped cleanly (the socket is removed)"
        wait_until(lambda: not any(alive(pid) for pid in hook_pids(stuck_ws)), timeout=3,
                   what="the stuck hooks to be killed")
        client.close()
        ledger = [json.loads(line) for path in (short_dir / "state").rglob("ledger.jsonl")
                  for line in path.read_text().splitlines()]
        intents = sorted(e["intent"]["args"]["path"] for e in ledger if e.get("phase") == "intent")
        assert intents == ["f0.txt", "f1.txt", "f2.txt"], "each call cut off left its intent line"
        assert not any((stuck_ws / f"f{index}.txt").exists() for index in range(3))
    finally:
        daemon.stop()
