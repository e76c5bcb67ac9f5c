"""A hook-based agent's command is answered before its link sweep; until the sweep's second look
is done, nothing gets the workspace's checkpoints: the next call, another call's audit, a
person's restore all see the workspace as that look left it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore
from intentd.daemon.checkpoints.sweep import file_clock_ns
from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.lifecycle import NOBODY
from intentd.daemon.sandbox.calls import late_audit
from intentd.daemon.sandbox.late_looks import LateLooks, StillSweeping
from intentd.daemon.testing import make_intent, make_session, make_workspace


@pytest.fixture
def store_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = Engine(tmp_path / "state")
    yield engine
    engine.close()


def test_the_store_waits_for_the_second_look_in_its_workspace_only(store_engine: Engine,
                                                                   tmp_path: Path) -> None:
    busy = store_engine.workspace(make_workspace(tmp_path / "busy"))
    other = store_engine.workspace(make_workspace(tmp_path / "other"))
    release, handed = threading.Event(), threading.Event()
    store_engine.late_looks.start(busy.root_str, lambda: release.wait(30))
    waiter = threading.Thread(target=lambda: (store_engine.checkpoint_store(busy), handed.set()))
    waiter.start()
    assert not handed.wait(0.5), "the store was handed out while the look still ran"
    store_engine.checkpoint_store(other)  # another workspace does not wait
    release.set()
    assert handed.wait(10), "the look ended, and the store was not handed out"
    waiter.join()


def test_a_look_that_fails_holds_nothing_up(store_engine: Engine, tmp_path: Path) -> None:
    workspace = store_engine.workspace(make_workspace(tmp_path / "ws"))

    def broken() -> None:
        raise OSError("the disk went away")

    store_engine.late_looks.start(workspace.root_str, broken)
    store_engine.late_looks.settle(workspace.root_str, timeout=10)
    assert store_engine.checkpoint_store(workspace) is not None


def test_a_look_that_never_ends_refuses_the_next_call(store_engine: Engine, tmp_path: Path) -> None:
    """A sweep stuck in a hung mount: the workspace's next call is refused, never run on a
    workspace whose last command was only half audited."""
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]),
                          policy={"auto_approve": {"edit": True}})
    session = make_session(store_engine, root)
    store_engine.call(session, "select_active_intent", {"intent_id": "INT-1"}, approver=NOBODY)
    store_engine.late_looks = LateLooks(settle_seconds=0.3)
    release = threading.Event()
    store_engine.late_looks.start(session.workspace.root_str, lambda: release.wait(30))
    try:
        started = time.monotonic()
        with pytest.raises(StillSweeping, match="still sweeping after 0 s"):
            store_engine.checkpoint_store(session.workspace)
        assert time.monotonic() - started < 10
        outcome = store_engine.call(session, "write_to_file", {"path": "src/new.py",
                                                               "content": "x = 1\n"},
                                    approver=NOBODY)
        assert outcome.decision.stage == "checkpoint" and not outcome.result
        assert "still sweeping" in outcome.decision.reason
        assert not (session.workspace.root / "src" / "new.py").exists()
    finally:
        release.set()


def test_a_second_look_that_fails_says_so(store_engine: Engine, tmp_path: Path) -> None:
    session = make_session(store_engine, make_workspace(tmp_path / "ws"))
    ctx = CallContext(session, session.workspace.config, "execute_command", {"command": "make"})
    store = CheckpointStore(session.workspace.root, tmp_path / "checkpoints")
    try:
        record = late_audit(ctx, "c-1", store, "cp-999999", False, file_clock_ns(), None)
    finally:
        store.close()
    assert record is not None and record["error"] and record["late_for"] == "c-1"
    assert record["message"].startswith("[scope audit, link sweep after call c-1 failed: ")
    assert "compare with checkpoint cp-999999" in record["message"]


def test_a_second_look_tells_only_what_the_first_did_not(store_engine: Engine,
                                                         tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", files={"docs/a.md": "a\n", "docs/b.md": "b\n"})
    session = make_session(store_engine, root)
    ctx = CallContext(session, session.workspace.config, "execute_command", {"command": "make"})
    store = CheckpointStore(root, tmp_path / "checkpoints")
    try:
        checkpoint = store.create(None, label="before make")
        (root / "docs" / "a.md").write_text("A\n")
        (root / "docs" / "b.md").write_text("B\n")
        first = {"out_of_scope": [["docs/a.md", "modified"]]}
        record = late_audit(ctx, "c-1", store, checkpoint.id, False, file_clock_ns(), first)
    finally:
        store.close()
    assert record is not None
    assert record["out_of_scope"] == [["docs/b.md", "modified"]] and record["undone"] == ["docs/b.md"]
    assert (root / "docs" / "b.md").read_text() == "b\n"


def test_the_second_look_leaves_what_changed_after_the_report(store_engine: Engine,
                                                              tmp_path: Path) -> None:
    """The agent heard its answer before the sweep: what changes after the report (the
    person's own edit, right away) is not the command's, and is never undone."""
    root = make_workspace(tmp_path / "ws", files={"docs/a.md": "a\n", "docs/b.md": "b\n"})
    session = make_session(store_engine, root)
    ctx = CallContext(session, session.workspace.config, "execute_command", {"command": "make"})
    store = CheckpointStore(root, tmp_path / "checkpoints")
    try:
        checkpoint = store.create(None, label="before make")
        link = tmp_path / "link"  # the command writes docs/a.md through a name outside
        os.link(root / "docs" / "a.md", link)
        link.write_text("A\n")
        link.unlink()
        reported = file_clock_ns()
        time.sleep(0.05)  # past the file clock's tick
        (root / "docs" / "b.md").write_text("the person's edit\n")
        record = late_audit(ctx, "c-1", store, checkpoint.id, False, reported, None)
    finally:
        store.close()
    assert record is not None and record["undone"] == ["docs/a.md"], record
    assert (root / "docs" / "a.md").read_text() == "a\n"
    assert (root / "docs" / "b.md").read_text() == "the person's edit\n"

