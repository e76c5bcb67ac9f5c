"""Calls authorized and never reported: past the limit the oldest is dropped, and its receipt is
written on a thread of its own. The call that dropped it may be on the daemon's event loop (a
read's authorize is), and that receipt may wait: here on a ledger another process holds."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine import engine as engine_module
from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.ledger import read_ledger
from intentd.daemon.testing import make_intent, make_session, make_workspace
from intentd.daemon.utils.statedir import workspace_state_dir

POLICY = {"auto_approve": {"edit": True, "max_consecutive": 0}}


def receipts(ledger: Path) -> dict[str, str]:
    """Each call's receipt result, by call id."""
    return {e["intent"]["id"]: e["receipt"]["result"] for e in read_ledger(ledger) if "receipt" in e}


def test_a_call_dropped_unreported_is_recorded_without_holding_up_the_call_that_dropped_it(
        tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "MAX_UNREPORTED", 2)
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy=POLICY)
    session = make_session(engine, root)
    selected = engine.evaluate(session, "select_active_intent", {"intent_id": "INT-1"})
    engine.apply_dry_run(selected)
    writes = [engine.evaluate(session, "write_to_file", {"path": f"src/{n}.py", "content": "x"})
              for n in range(2)]
    for ev in writes:  # authorized, their intent lines written; the client never reports
        assert engine.authorize(ev, approved_by=None).decision.verdict.value == "allow"
    ledger = workspace_state_dir(root.resolve(), engine.home) / "ledger.jsonl"
    other = os.open(ledger.with_suffix(".lock"), os.O_RDWR)  # another writer, mid-line
    fcntl.flock(other, fcntl.LOCK_EX)
    try:
        read = engine.evaluate(session, "read_file", {"path": "README.md"})
        done: list[Any] = []
        caller = threading.Thread(target=lambda: done.append(engine.authorize(read, None)))
        caller.start()
        caller.join(5)
        assert done, "the read's authorize waited on the dropped call's receipt"
        assert writes[0].call_id not in receipts(ledger)  # which waits for the ledger
    finally:
        fcntl.flock(other, fcntl.LOCK_UN)
        os.close(other)
    deadline = time.monotonic() + 10
    while writes[0].call_id not in receipts(ledger) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert receipts(ledger).get(writes[0].call_id) == "error"  # recorded as never reported
    assert writes[1].call_id not in receipts(ledger)  # the others still await their reports


def test_calls_dropped_unreported_are_all_recorded_once_the_engine_has_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "MAX_UNREPORTED", 1)
    engine = Engine(tmp_path / "state", checkpoints=False)
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy=POLICY)
    session = make_session(engine, root)
    engine.apply_dry_run(engine.evaluate(session, "select_active_intent", {"intent_id": "INT-1"}))
    write = engine.evaluate(session, "write_to_file", {"path": "src/a.py", "content": "x"})
    engine.authorize(write, approved_by=None)
    ledger = workspace_state_dir(root.resolve(), engine.home) / "ledger.jsonl"
    other = os.open(ledger.with_suffix(".lock"), os.O_RDWR)
    fcntl.flock(other, fcntl.LOCK_EX)  # the dropped calls' receipts queue up meanwhile
    reads = [engine.evaluate(session, "read_file", {"path": "README.md"}) for _ in range(3)]
    for read in reads:
        engine.authorize(read, approved_by=None)
    fcntl.flock(other, fcntl.LOCK_UN)
    os.close(other)
    engine.close()  # at once: what is queued is written before the ledger closes
    assert set(receipts(ledger)) == {write.call_id, *(r.call_id for r in reads[:2])}
