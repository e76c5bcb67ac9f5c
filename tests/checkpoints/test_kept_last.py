"""Checkpoints pruning drops last: the state before each session's first call, and the baseline.

Pruning otherwise drops the checkpoint keeping the most replaced content alive first, and an
agent decides how that content is spread: over hundreds of checkpoints that save almost
nothing, each keeps a little, and the person's checkpoint before the agent's work, holding the
version of their file the agent replaced, kept the most.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from intentd.daemon.agents.approver import TerminalApprover
from intentd.daemon.agents.local_gateway import LocalGateway
from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import make_workspace

from .conftest import StoreFactory, write


def test_an_agent_spreading_its_history_thin_cannot_push_out_a_checkpoint_kept_last(
        ws: Path, make_store: StoreFactory) -> None:
    write(ws, "notes.bin", os.urandom(64 * 1024))  # the person's file
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(ws / "notes.bin", ns=(hour_ago, hour_ago))
    original = (ws / "notes.bin").read_bytes()
    store = make_store(ws, max_store_bytes=3 * 2**20, max_file_bytes=2**20, watch=False)
    person = store.create(None, label="before the agent's first call")
    store.keep_last(person.id)
    write(ws, "notes.bin", os.urandom(64 * 1024))  # the agent replaces the person's file
    for i in range(4):
        write(ws, f"x{i}.bin", os.urandom(900 * 1024))
    store.create(None, label="agent 1")
    for i in range(120):  # many commands that save almost nothing
        write(ws, "t.txt", f"{i:08d}")
        store.create(None, label=f"agent tiny {i}")
    for i in range(4):
        (ws / f"x{i}.bin").unlink()
    store.create(None, label="agent deleted them")
    write(ws, "y.bin", os.urandom(300 * 1024))
    store.create(None, label="agent last")
    store.wait_for_upkeep()
    left = [c.id for c in store.list()]
    assert person.id in left and len(left) < 125
    store.restore(person.id)
    assert (ws / "notes.bin").read_bytes() == original


def test_the_baseline_is_kept_last(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws)
    baseline = store.warm_up()
    assert baseline is not None
    assert store._manifest.kept_last() == {int(baseline.id[3:])}


def test_the_engine_keeps_each_sessions_first_checkpoint_last(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", policy={"auto_approve": {"edit": True}},
                        files={"src/app.py": "x = 1\n"})
    engine = Engine(tmp_path / "state")  # with checkpoints
    try:
        taken = []
        for session in range(2):
            gateway = LocalGateway(ws, "test", TerminalApprover(), engine=engine)
            gateway.call("select_active_intent", {"intent_id": "INT-1"})
            for n in range(2):
                done = gateway.call("write_to_file", {"path": f"src/s{session}-{n}.py",
                                                      "content": f"x = {n}\n"})
                assert done.checkpoint_id, done
                taken.append(int(done.checkpoint_id[3:]))
        store = engine.checkpoint_store(gateway.session.workspace)
        store.wait_for_upkeep()
        kept = store._manifest.kept_last()
    finally:
        engine.close()
    assert taken[0] in kept and taken[2] in kept  # each session's first
    assert taken[1] not in kept and taken[3] not in kept
