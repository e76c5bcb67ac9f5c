"""A scope audit that cannot run is never silent: the agent, the ledger and the app are told that
changes outside the scope may remain, and against which checkpoint to compare."""

from __future__ import annotations

from pathlib import Path

from intentd.daemon.checkpoints import CheckpointStore
from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.engine import Engine
from intentd.daemon.sandbox.calls import audited
from intentd.daemon.testing import make_session
from intentd.daemon.tools.base import ToolResult


def test_an_audit_that_fails_says_so(engine: Engine, workspace: Path, tmp_path: Path) -> None:
    session = make_session(engine, workspace)
    ctx = CallContext(session, session.workspace.config, "execute_command", {"command": "make"})
    store = CheckpointStore(workspace, tmp_path / "checkpoints")
    try:
        # a checkpoint the store does not hold (pruned meanwhile): the diff cannot be taken
        result = audited(ctx, ToolResult(True, "built"), store, "cp-999999")
    finally:
        store.close()
    assert result.output.startswith("built\n[scope audit failed: ")
    assert "changes outside the scope may remain — compare with checkpoint cp-999999" in result.output
    record = result.data["scope_audit"]
    assert record["checkpoint_id"] == "cp-999999" and record["error"]
    assert record["message"] in result.output
