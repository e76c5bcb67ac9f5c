"""Writes to different workspaces do not wait for each other: a workspace whose ledger or
checkpoint store another process holds locked stops its own writes only."""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.engine.ledger import read_ledger
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace
from intentd.daemon.utils.statedir import workspace_state_dir

POLICY = {"auto_approve": {"edit": True, "max_consecutive": 0}}


def gated_write(client: Client, session: str, workspace: Path, name: str) -> None:
    answer = client.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session, "tool": "write_to_file", "args": {"path": name, "content": "x\n"}})
    assert answer["decision"] == "allow", answer
    (workspace / name).write_text("x\n")
    client.call(protocol.TOOLS_REPORT, {"session_id": session, "call_id": answer["call_id"],
                                        "ok": True})


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """The file locked for the block by another process's writer, stuck mid-line."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def opened(client: Client, workspace: Path) -> str:
    session = str(client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace)})["session_id"])
    client.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
    return session


@pytest.mark.parametrize("lock", ["ledger.lock", "checkpoints/lock"])
def test_a_workspace_held_up_by_its_ledger_or_store_holds_up_no_other(
        daemon: DaemonProcess, tmp_path: Path, lock: str) -> None:
    held_ws, free_ws = (make_workspace(tmp_path / name, make_intent(owned_scope=["**"]),
                                       policy=POLICY) for name in ("held", "free"))
    with Client(daemon.socket_path, timeout=30) as held_client, \
            Client(daemon.socket_path, timeout=30) as free_client:
        held, free = opened(held_client, held_ws), opened(free_client, free_ws)
        gated_write(held_client, held, held_ws, "first.txt")  # both ledgers and stores open
        gated_write(free_client, free, free_ws, "first.txt")
        lock_file = next(p for p in daemon.state_dir.rglob(lock) if "held" in str(p))
        finished: list[Any] = []
        waiting = threading.Thread(
            target=lambda: finished.append(gated_write(held_client, held, held_ws, "second.txt")))
        with locked(lock_file):  # another writer of that ledger, a `restore` of that store
            waiting.start()
            time.sleep(0.3)
            assert not finished  # its intent line or checkpoint cannot be written: it waits, unrun
            started = time.monotonic()
            for n in range(5):
                gated_write(free_client, free, free_ws, f"free-{n}.txt")
            assert time.monotonic() - started < 5
            assert not finished
        waiting.join(10)
        assert finished == [None]  # and once the ledger is free it is recorded and answered


def test_a_session_opening_on_a_locked_ledger_holds_up_no_other(daemon: DaemonProcess,
                                                                tmp_path: Path) -> None:
    cold_ws, free_ws = (make_workspace(tmp_path / name, make_intent(owned_scope=["**"]),
                                       policy=POLICY) for name in ("cold", "free"))
    state = workspace_state_dir(cold_ws.resolve(), daemon.state_dir / "intentd")
    state.mkdir(parents=True)
    with Client(daemon.socket_path, timeout=30) as cold_client, \
            Client(daemon.socket_path, timeout=30) as free_client:
        sessions: list[str] = []
        waiting = threading.Thread(target=lambda: sessions.append(opened(cold_client, cold_ws)))
        with locked(state / "ledger.lock"):  # before the daemon ever opened that ledger
            waiting.start()
            time.sleep(0.3)
            started = time.monotonic()
            free = opened(free_client, free_ws)
            for n in range(3):
                gated_write(free_client, free, free_ws, f"free-{n}.txt")
            assert time.monotonic() - started < 5
            assert not sessions
        waiting.join(10)
        assert len(sessions) == 1
        gated_write(cold_client, sessions[0], cold_ws, "late.txt")


def never_reported(client: Client, session: str, name: str) -> str:
    """A write authorized whose client never reports it; its call id."""
    answer = client.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session, "tool": "write_to_file", "args": {"path": name, "content": "x\n"}})
    assert answer["decision"] == "allow"
    return str(answer["call_id"])


def recorded(*ledgers: Path) -> set[str]:
    """The call ids with a receipt in these ledgers."""
    return {e["intent"]["id"] for ledger in ledgers for e in read_ledger(ledger) if "receipt" in e}


@pytest.mark.parametrize("then", ["waits for the answer", "hangs up"])
def test_closing_a_session_whose_ledger_is_held_holds_up_no_other(
        daemon: DaemonProcess, tmp_path: Path, then: str) -> None:
    """A session closed with calls never reported: their receipts wait for the ledger another
    process holds, on a tool thread, even once the client that asked has hung up; the other
    workspaces' calls go on meanwhile, and the receipts are written when the ledger is free."""
    held_ws, free_ws = (make_workspace(tmp_path / name, make_intent(owned_scope=["**"]),
                                       policy=POLICY) for name in ("held", "free"))
    with Client(daemon.socket_path, timeout=30) as held_client, \
            Client(daemon.socket_path, timeout=30) as free_client:
        held, free = opened(held_client, held_ws), opened(free_client, free_ws)
        gated_write(free_client, free, free_ws, "first.txt")
        call_ids = [never_reported(held_client, held, f"never-{n}.txt") for n in range(2)]
        ledger = next(p for p in daemon.state_dir.rglob("ledger.jsonl") if "held" in str(p))
        closed: list[Any] = []
        closing = threading.Thread(target=lambda: closed.append(
            held_client.call(protocol.SESSIONS_CLOSE, {"session_id": held})))
        with locked(ledger.with_suffix(".lock")):
            if then == "hangs up":
                held_client.send({"jsonrpc": "2.0", "id": 99, "method": protocol.SESSIONS_CLOSE,
                                  "params": {"session_id": held}})
                time.sleep(0.2)
                held_client.close()  # the close, waiting on a thread, is cancelled on the loop
            else:
                closing.start()
            time.sleep(0.3)
            assert not closed  # the receipt of the call never reported waits for the ledger
            started = time.monotonic()
            for n in range(3):
                gated_write(free_client, free, free_ws, f"free-{n}.txt")
            assert time.monotonic() - started < 5
        if then != "hangs up":
            closing.join(10)
            assert closed and closed[0]["closed"] is True
    deadline = time.monotonic() + 10
    while not recorded(ledger) >= set(call_ids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert recorded(ledger) >= set(call_ids)


def test_a_stop_while_a_close_waits_records_every_sessions_calls(short_dir: Path) -> None:
    """A client with sessions in two workspaces hangs up; the first close waits for a ledger
    another process holds, and the daemon is stopped meanwhile: every call never reported still
    gets its receipt, the other workspace's at once and the held one's once it is let go."""
    held_ws, free_ws = (make_workspace(short_dir / name, make_intent(owned_scope=["**"]),
                                       policy=POLICY) for name in ("held", "free"))
    daemon = DaemonProcess(short_dir / "d.sock", short_dir / "state").start()
    try:
        calls = []
        with Client(daemon.socket_path, timeout=30) as client:
            for n in range(6):
                calls.append(never_reported(client, opened(client, held_ws if n == 0 else free_ws),
                                            f"never-{n}.txt"))
            held_ledger, free_ledger = (
                next(p for p in daemon.state_dir.rglob("ledger.jsonl") if name in str(p))
                for name in ("held", "free"))
            with locked(held_ledger.with_suffix(".lock")):
                client.close()
                time.sleep(1.0)
                assert daemon.process is not None
                daemon.process.send_signal(signal.SIGTERM)
                time.sleep(1.0)
        assert daemon.stop(timeout=20) == 0
    finally:
        daemon.stop()
    assert recorded(held_ledger, free_ledger) >= set(calls)
