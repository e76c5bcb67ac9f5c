"""FIFOs, sockets and devices: every tool skips or refuses them at once, and never hangs."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.ledger import read_ledger
from intentd.daemon.testing import make_intent, make_session, make_workspace
from intentd.daemon.utils.statedir import checkpoints_dir, workspace_state_dir
from tests.robustness.helpers import open_session

Connect = Callable[[str], Client]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]),
                          files={"src/a.py": "needle = 1\n", "src/z.py": "needle = 2\n"})
    os.mkfifo(root / "src" / "pipe.py")
    return root


@pytest.fixture
def unix_socket(ws: Path) -> Iterator[Path]:
    path = ws / "src" / "s.py"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.getcwd()
    os.chdir(path.parent)  # bind by a short relative name: the absolute path may be too long
    try:
        server.bind(path.name)
    finally:
        os.chdir(old)
    server.listen(1)
    yield path
    server.close()


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """fn's answer; fails (instead of hanging the test run) when it takes longer than `seconds`."""
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"no answer within {seconds} s: the tool hung"
    return box[0]


def run(engine: Engine, session: Any, tool: str, **args: Any) -> Any:
    ev = engine.evaluate(session, tool, args)
    if ev.decision.verdict.value == "deny":
        return ev.decision
    return engine.run(ev, approved_by="test").result


@pytest.fixture
def session(engine: Engine, ws: Path) -> Any:
    s = make_session(engine, ws)
    run(engine, s, "select_active_intent", intent_id="INT-1")
    return s


def test_search_and_listing_skip_a_fifo_and_a_socket(engine: Engine, session: Any,
                                                     unix_socket: Path) -> None:
    found = within(5, lambda: run(engine, session, "search_files", regex="needle"))
    assert found.ok and found.output.splitlines() == ["src/a.py:1: needle = 1", "src/z.py:1: needle = 2"]
    listed = within(5, lambda: run(engine, session, "list_files", path="src"))
    assert listed.output.splitlines() == ["src/a.py", "src/z.py"]


@pytest.mark.parametrize("name", ["src/pipe.py", "src/s.py"])
def test_reading_a_special_file_is_refused_at_once(engine: Engine, session: Any, unix_socket: Path,
                                                   name: str) -> None:
    for extra in ({}, {"start_line": 1, "end_line": 2}):
        result = within(5, lambda extra=extra: run(engine, session, "read_file", path=name, **extra))
        assert "not a regular file" in str(getattr(result, "output", None) or result.reason)


def test_editing_a_fifo_is_refused_at_once(engine: Engine, session: Any, ws: Path) -> None:
    result = within(5, lambda: run(engine, session, "replace_in_file", path="src/pipe.py",
                                   old_str="a", new_str="b"))
    assert result.verdict.value == "deny"
    result = within(5, lambda: run(engine, session, "write_to_file", path="src/pipe.py",
                                   content="x"))
    assert not result.ok and "not a regular file" in result.output
    assert (ws / "src" / "pipe.py").is_fifo(), "the FIFO is left as it was"


def test_a_device_behind_a_symlink_is_not_read(engine: Engine, session: Any, ws: Path) -> None:
    (ws / "src" / "zero.py").symlink_to("/dev/zero")
    found = within(5, lambda: run(engine, session, "search_files", regex="needle"))
    assert "zero" not in found.output


def test_fifos_in_searched_folders_never_stall_the_daemon(connect: Connect, ws: Path) -> None:
    """More searches than tool threads, each across a FIFO; another client is still answered."""
    agents = [connect(f"agent-{i}") for i in range(12)]
    sessions = [open_session(agent, ws) for agent in agents]
    for agent, session_id in zip(agents, sessions, strict=True):
        agent.send(protocol.request(protocol.TOOLS_CALL, {
            "session_id": session_id, "tool": "search_files", "args": {"regex": "needle"}}, id=99))
    other = connect("other")
    session_id = open_session(other, ws)
    started = time.monotonic()
    answer = other.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "read_file",
                                              "args": {"path": "src/a.py"}}, timeout=10)
    assert answer["result"]["output"] == "needle = 1\n" and time.monotonic() - started < 10
    for agent in agents:
        message = agent.read_message(timeout=10)
        assert message["result"]["result"]["ok"] and "src/z.py:1" in message["result"]["result"]["output"]


def test_a_fifo_in_place_of_git_head_does_not_hold_a_write(engine: Engine, session: Any,
                                                             ws: Path) -> None:
    """The receipt names the git revision read from .git/HEAD; an agent's own shell can put a
    FIFO there, which must not hang the call that reads it."""
    (ws / ".git").mkdir(exist_ok=True)
    os.mkfifo(ws / ".git" / "HEAD")
    result = within(5, lambda: run(engine, session, "write_to_file", path="src/new.py",
                                   content="x = 1\n"))
    assert result.ok and (ws / "src" / "new.py").read_text() == "x = 1\n"


def test_a_fifo_planted_in_the_daemons_state_refuses_the_write_and_hangs_nothing(
        tmp_path: Path, ws: Path) -> None:
    """The agent runs as the same user and can reach the daemon's state folder. A FIFO in place
    of the checkpoint manifest's log once hung the store's opening for ever: the write is now
    refused at once, for want of a checkpoint, and nothing is written."""
    home = tmp_path / "state"
    store_dir = checkpoints_dir(ws.resolve(), home)
    store_dir.mkdir(parents=True)
    os.mkfifo(store_dir / "manifest.sqlite3-wal")
    engine = Engine(home)
    try:
        session = make_session(engine, ws)
        run(engine, session, "select_active_intent", intent_id="INT-1")
        ev = engine.evaluate(session, "write_to_file", {"path": "src/new.py", "content": "x\n"})
        assert ev.decision.stage == "approval", ev.decision  # a person approves it
        refused = within(30, lambda: engine.run(ev, approved_by="person")).decision
    finally:
        engine.close()
    assert refused.stage == "checkpoint" and "not a regular file" in refused.reason
    assert not (ws / "src" / "new.py").exists()


def test_a_fifo_in_place_of_the_kept_texts_log_costs_only_their_trace(
        tmp_path: Path, ws: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The same FIFO beside the kept texts: the write and its receipt go through, and the log
    says why its texts were not kept (the writer once waited on the FIFO for ever)."""
    home = tmp_path / "state"
    texts = workspace_state_dir(ws.resolve(), home) / "contents"
    texts.mkdir(parents=True)
    os.mkfifo(texts / "texts.sqlite3-wal")
    engine = Engine(home, checkpoints=False)
    session = make_session(engine, ws)
    run(engine, session, "select_active_intent", intent_id="INT-1")
    result = within(30, lambda: run(engine, session, "write_to_file", path="src/new.py",
                                    content="x = 1\n"))
    with caplog.at_level(logging.WARNING, logger="intentd.daemon.trace.texts_db"):
        within(30, engine.close)
    assert "not a regular file" in caplog.text
    assert result.ok and (ws / "src" / "new.py").read_text() == "x = 1\n"
    receipts = list(read_ledger(workspace_state_dir(ws.resolve(), home) / "ledger.jsonl"))
    assert receipts[-1]["intent"]["tool"] == "write_to_file"
    assert receipts[-1]["receipt"]["result"] == "success"
