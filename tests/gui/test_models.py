"""The table models over the plain state, checked with qtmodeltester while they change."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester

from intentd.gui.models.activity import ActivityFilter, ActivityModel
from intentd.gui.models.approvals import ApprovalsModel
from intentd.gui.models.checkpoints import CheckpointsModel
from intentd.gui.models.intents import IntentsModel
from intentd.gui.models.workspaces import WorkspacesModel
from intentd.gui.state.activity import ActivityLog
from intentd.gui.state.approvals import PendingApprovals
from intentd.gui.state.records import Approval, Checkpoint, Intent, LedgerEntry
from intentd.gui.state.workspaces import WorkspaceRegistry
from intentd.gui.theme import colors
from tests.gui.factories import approval_json, intent_json, ledger_json

# The models' timers need an application, also when this module runs alone.
pytestmark = pytest.mark.usefixtures("qapp")


def column(model: ApprovalsModel | ActivityModel | ActivityFilter, name: str) -> list[str]:
    headers = [model.headerData(c, Qt.Orientation.Horizontal)
               for c in range(model.columnCount())]
    col = headers.index(name)
    return [model.index(r, col).data() for r in range(model.rowCount())]


def test_approvals_model_is_newest_first_through_adds_removes_and_resets(
        qtmodeltester: ModelTester) -> None:
    queue = PendingApprovals()
    model = ApprovalsModel(queue)
    qtmodeltester.check(model)
    first, second, third = (Approval.from_json(approval_json(created_at=t)) for t in (1, 3, 2))
    for approval in (first, second, third):
        queue.add(approval)
    assert [model.approval_at(r).id for r in range(3)] == [second.id, third.id, first.id]
    assert column(model, "Workspace") == ["proj"] * 3
    assert column(model, "Intent") == ["INT-1"] * 3
    queue.remove(third.id, "approved")
    assert model.rowCount() == 2 and model.row_of(third.id) == -1
    queue.replace([Approval.from_json(approval_json()) for _ in range(5)])
    assert model.rowCount() == 5
    qtmodeltester.check(model)


def test_intents_model_shows_who_selected_what(qtmodeltester: ModelTester) -> None:
    registry = WorkspaceRegistry()
    model = IntentsModel(registry)
    model.set_workspace("/w/proj")
    qtmodeltester.check(model)
    registry.set_intents("/w/proj", [Intent.from_json(intent_json("INT-1")),
                                     Intent.from_json(intent_json("INT-2", "BLOCKED"))],
                         {"s-1": "INT-1", "s-2": "INT-1"})
    assert model.rowCount() == 2
    assert model.index(0, 3).data() == "s-1, s-2"
    assert model.index(1, 3).data() == ""
    greyed = model.index(1, 0).data(Qt.ItemDataRole.ForegroundRole)
    assert greyed is not None  # not selectable
    registry.set_intents("/w/other", [])
    assert model.rowCount() == 2  # another workspace's change leaves this one alone
    registry.session_closed("/w/proj", "s-2")
    assert model.index(0, 3).data() == "s-1"
    qtmodeltester.check(model)


def test_activity_model_and_filter(qtmodeltester: ModelTester) -> None:
    log = ActivityLog(limit=4)
    model = ActivityModel(log)
    proxy = ActivityFilter()
    proxy.setSourceModel(model)
    qtmodeltester.check(model)
    qtmodeltester.check(proxy)
    log.merge([LedgerEntry.from_json(ledger_json(decision="allow")),
               LedgerEntry.from_json(ledger_json(decision="deny", tool="write_to_file"))])
    for decision in ("allow", "deny", "allow"):
        log.add(LedgerEntry.from_json(ledger_json(workspace="/w/other", decision=decision)))
    assert model.rowCount() == 4  # the oldest dropped off at the limit
    proxy.set_decision("deny")
    assert column(proxy, "Decision") == ["deny (auto)", "deny (auto)"]
    proxy.set_decision("")
    proxy.set_workspace("/w/other")
    assert proxy.rowCount() == 3
    proxy.set_workspace("")
    proxy.set_text("write_to")
    assert column(proxy, "Tool") == ["write_to_file"]
    qtmodeltester.check(proxy)


def test_workspaces_model_counts_pending(qtmodeltester: ModelTester) -> None:
    registry, queue = WorkspaceRegistry(), PendingApprovals()
    model = WorkspacesModel(registry, queue)
    qtmodeltester.check(model)
    registry.ensure("/w/proj")
    registry.ensure("/w/other")
    queue.add(Approval.from_json(approval_json("/w/other")))
    assert [model.index(r).data() for r in range(2)] == ["proj", "other  (1 pending)"]
    assert model.path_at(1) == "/w/other"
    qtmodeltester.check(model)
    registry.ensure("/x/proj")  # a namesake: both are named with their parent folder
    assert [model.index(r).data() for r in (0, 2)] == ["w/proj", "x/proj"]
    registry.remove("/x/proj")  # its folder is gone
    assert [model.index(r).data() for r in range(model.rowCount())] == [
        "proj", "other  (1 pending)"]
    qtmodeltester.check(model)


def test_checkpoints_model(qtmodeltester: ModelTester) -> None:
    registry = WorkspaceRegistry()
    model = CheckpointsModel(registry)
    model.set_workspace("/w/proj")
    registry.set_checkpoints("/w/proj", [Checkpoint.from_json(
        {"id": "cp-1", "created_at": 1.0, "label": "write_to_file src/x.py", "kind": "files",
         "files": ["src/x.py"]})])
    assert [model.index(0, c).data() for c in (0, 2, 4)] == [
        "cp-1", "write_to_file src/x.py", "1: src/x.py"]
    qtmodeltester.check(model)


def test_an_approval_names_its_target_and_session_in_one_line() -> None:
    command = Approval.from_json(approval_json(args={"command": "make\nmake install"},
                                               agent=""))
    assert (command.target_line, command.session_label) == (
        "make", f"{command.session_id} (unknown agent)")
    assert Approval.from_json(approval_json(args={})).target_line == ""
    queue = PendingApprovals()
    model = ApprovalsModel(queue)
    queue.add(command)
    assert column(model, "Target") == ["make"]
    assert column(model, "Preview") == ["make  ⏎  make install"]
    session_column = ApprovalsModel.HEADERS.index("Session")
    assert model.index(0, session_column).data(Qt.ItemDataRole.ToolTipRole) == \
        command.session_label


def test_targets_are_relative_to_their_workspace_and_edits_preview_their_changes() -> None:
    sent = Approval.from_json(approval_json(
        args={"path": "/w/proj/src/a.py", "content": "x"},
        diff="--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-old\n+new\n"))
    queue = PendingApprovals()
    model = ApprovalsModel(queue)
    queue.add(sent)
    assert column(model, "Target") == ["src/a.py"]
    assert column(model, "Preview") == ["-old  ⏎  +new"]


def test_the_registry_answers_none_for_no_workspace() -> None:
    registry = WorkspaceRegistry()
    registry.ensure("/w/proj")
    assert registry.get(None) is None and registry.get("") is None
    assert registry.get("/w/proj") is not None


def test_colours_are_built_once_per_brightness() -> None:
    assert colors() is colors()
    assert colors().allow.name() in ("#1a7f37", "#3fb950")  # light, dark
