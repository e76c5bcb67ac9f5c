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


def odd_names(ws: Path, count: int) -> None:
    """Files whose names are not UTF-8: no checkpoint keeps one, each lists them as skipped."""
    folder = os.fsencode(ws)
    for i in range(count):
        with open(os.path.join(folder, b"\xff%05d" % i + b"z" * 240), "wb"):
            pass


def test_rows_an_agent_piles_up_do_not_cost_the_person_their_checkpoint(
        ws: Path, make_store: StoreFactory) -> None:
    """Thirty commands each listing 300 names no checkpoint can keep put 2 MB of rows in the
    manifest; spread over the blobs, they made the person's one replaced version look bigger
    than the history's room, and the checkpoint kept last went while the agent's stayed."""
    write(ws, "person.bin", os.urandom(500 * 1024))
    store = make_store(ws, max_store_bytes=3 * 2**20, max_file_bytes=2**20, watch=False)
    person = store.create(None, label="before the agent's first call")
    store.keep_last(person.id)
    write(ws, "person.bin", b"the agent was here\n")
    odd_names(ws, 300)
    for n in range(30):
        store.create(None, label=f"agent {n}")
    for i in range(3):
        write(ws, f"big{i}.bin", os.urandom(900 * 1024))
    store.create(None, label="agent big")
    store.wait_for_upkeep()
    assert person.id in [c.id for c in store.list()]


def test_rows_alone_bring_a_prune_on(ws: Path, make_store: StoreFactory) -> None:
    """Names listed as skipped again and again, and files flipping between two contents already
    stored, grow the manifest with no new blob: the prune's trigger counts the rows too."""
    cap = 3 * 2**20
    store = make_store(ws, max_store_bytes=cap, max_file_bytes=2**20, watch=False)
    store.create(None, label="first")
    odd_names(ws, 400)
    flipping = [f"f{i:04d}_{'y' * 200}" for i in range(400)]
    for n in range(40):
        for name in flipping:
            write(ws, name, "AB"[n % 2])
        store.create(None, label=f"agent {n}")
    store.wait_for_upkeep()
    assert store._upkeep.held() <= cap
