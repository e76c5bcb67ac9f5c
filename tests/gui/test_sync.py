"""StateSync: the full load after a connect, then each notification applied to the state."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.gui.app_core import AppCore
from intentd.gui.connection import ConnectionState
from tests.gui.factories import approval_json, intent_json, ledger_json
from tests.gui.fake_daemon import FakeDaemon, caught_up, loading_handlers

WS = "/w/proj"


@pytest.fixture
def fake(short_dir: Path) -> Iterator[FakeDaemon]:
    daemon = FakeDaemon(short_dir / "fake.sock").start()
    daemon.handlers.update(loading_handlers([approval_json(WS), approval_json("/w/other")], WS))
    yield daemon
    daemon.stop()


@pytest.fixture
def core(fake: FakeDaemon, qtbot: QtBot) -> Iterator[AppCore]:
    core = AppCore.create(fake.path)
    with qtbot.waitSignal(core.sync.loaded, timeout=5000):
        core.connection.open()
    yield core
    core.connection.close()


def test_a_connect_loads_approvals_workspaces_intents_and_activity(core: AppCore,
                                                                   fake: FakeDaemon) -> None:
    assert len(core.approvals) == 2
    assert core.workspaces.paths() == [WS, "/w/other"]
    workspace = core.workspaces.get(WS)
    assert workspace is not None and workspace.sessions == 1
    assert [i.id for i in workspace.intents] == ["INT-1"]
    assert workspace.selected == {"s-1": "INT-1"}
    assert len(core.activity) == 2
    assert sorted(p["params"]["workspace"] for p in fake.requests
                  if p["method"] == protocol.INTENTS_LIST) == ["/w/other", WS]


def test_notifications_change_the_state(core: AppCore, fake: FakeDaemon, qtbot: QtBot) -> None:
    new = approval_json(WS)
    fake.notify(protocol.APPROVALS_REQUESTED, new)
    qtbot.waitUntil(lambda: new["id"] in core.approvals)
    fake.notify(protocol.APPROVALS_RESOLVED, {"approval_id": new["id"], "resolution": "withdrawn",
                                              "feedback": None})
    qtbot.waitUntil(lambda: new["id"] not in core.approvals)
    fake.notify(protocol.INTENTS_CHANGED, {"workspace": WS, "intents": [
        intent_json("INT-1"), intent_json("INT-2")]})
    fake.notify(protocol.INTENTS_ERROR, {"workspace": WS, "error": {
        "file": f"{WS}/.orchestration/active_intents.yaml", "line": 3, "message": "bad indent"}})
    workspace = core.workspaces.get(WS)
    assert workspace is not None
    qtbot.waitUntil(lambda: workspace.error is not None)
    assert len(workspace.intents) == 2
    assert str(workspace.error).endswith("active_intents.yaml:3: bad indent")
    fake.notify(protocol.TOOLS_FINISHED, ledger_json(WS, decision="deny"))
    qtbot.waitUntil(lambda: len(core.activity) == 3)
    fake.notify(protocol.SESSIONS_OPENED, {"session_id": "s-9", "workspace": "/w/third",
                                           "agent": "a", "mode": "act"})
    qtbot.waitUntil(lambda: "/w/third" in core.workspaces)


def test_answering_removes_the_approval_at_once(core: AppCore, fake: FakeDaemon,
                                                qtbot: QtBot) -> None:
    answered: dict[str, dict[str, str]] = {}

    def respond(params: dict[str, str]) -> dict[str, bool]:
        if params["approval_id"] in answered:
            raise LookupError("already answered")
        answered[params["approval_id"]] = params
        return {"resolved": True}

    fake.handlers[protocol.APPROVALS_RESPOND] = respond
    first, second = (a.id for a in core.approvals.approvals())
    core.commands.reject(first, "not this way")
    qtbot.waitUntil(lambda: first not in core.approvals)
    assert answered[first] == {"approval_id": first, "decision": "reject",
                               "feedback": "not this way"}
    answered[second] = {}
    with qtbot.waitSignal(core.commands.command_failed):
        core.commands.approve(second)  # answered elsewhere meanwhile
    assert second not in core.approvals


def test_notifications_racing_the_approvals_list_are_not_undone(fake: FakeDaemon,
                                                                qtbot: QtBot) -> None:
    stale = approval_json(WS)
    fake.handlers[protocol.APPROVALS_LIST] = lambda p: {"approvals": [stale]}
    fake.silent.add(protocol.APPROVALS_LIST)
    core = AppCore.create(fake.path)
    try:
        core.connection.open()
        qtbot.waitUntil(lambda: protocol.APPROVALS_LIST in fake.methods())
        fresh = approval_json(WS)
        fake.notify(protocol.APPROVALS_REQUESTED, fresh)
        fake.notify(protocol.APPROVALS_RESOLVED, {"approval_id": stale["id"],
                                                  "resolution": "approved", "feedback": None})
        qtbot.waitUntil(lambda: fresh["id"] in core.approvals)
        request = next(r for r in fake.requests if r["method"] == protocol.APPROVALS_LIST)
        with qtbot.waitSignal(core.sync.loaded, timeout=5000):
            fake.send_raw(protocol.encode(protocol.result(request["id"],
                                                          {"approvals": [stale]})))
        assert [a.id for a in core.approvals.approvals()] == [fresh["id"]]
    finally:
        core.connection.close()


def test_a_load_cut_short_by_a_lost_connection_is_not_loaded(fake: FakeDaemon,
                                                               qtbot: QtBot) -> None:
    fake.silent.add(protocol.LEDGER_QUERY)  # the load never completes on this connection
    core = AppCore.create(fake.path)
    loads: list[bool] = []
    core.sync.loaded.connect(lambda: loads.append(core.workspaces.get(WS) is not None))
    try:
        core.connection.open()
        qtbot.waitUntil(lambda: protocol.LEDGER_QUERY in fake.methods())
        core.sync.load_settings(WS)  # asked for while the load is under way
        fake.stop()
        qtbot.waitUntil(lambda: core.connection.state == ConnectionState.DISCONNECTED)
        core.sync.load_checkpoints(WS)  # asked for while disconnected: never answered
        with qtbot.waitCallback() as failed:  # failures come in order: the one above came
            core.connection.request(protocol.CHECKPOINTS_LIST, {"workspace": WS}, None, failed)
        assert loads == [] and not core.sync.is_loaded  # a screenshot would not be taken
        fake.silent.clear()
        with qtbot.waitSignal(core.sync.loaded, timeout=5000):
            fake.start()
        assert loads == [True] and len(core.activity) == 2
    finally:
        core.connection.close()


def test_an_intents_change_updates_the_warnings(core: AppCore, fake: FakeDaemon,
                                                qtbot: QtBot) -> None:
    warning = f"{WS}/.orchestration/active_intents.yaml:9: unknown key 'colour' ignored"
    fake.handlers[protocol.INTENTS_LIST] = lambda p: {
        "workspace": p["workspace"], "intents": [intent_json("INT-1"), intent_json("INT-2")],
        "error": None, "warnings": [warning], "selected": {}}
    fake.notify(protocol.INTENTS_CHANGED, {"workspace": WS, "intents": [
        intent_json("INT-1"), intent_json("INT-2")]})
    workspace = core.workspaces.get(WS)
    assert workspace is not None
    qtbot.waitUntil(lambda: workspace.warnings == [warning])
    assert [i.id for i in workspace.intents] == ["INT-1", "INT-2"]


def test_a_late_answer_of_an_earlier_load_does_not_bring_back_a_dropped_workspace(
        fake: FakeDaemon, qtbot: QtBot) -> None:
    gone = "/w/deleted-since"
    listed = [WS, gone]
    fake.handlers[protocol.WORKSPACES_LIST] = lambda p: {"workspaces": [
        {"workspace": w, "sessions": 1, "pending": 0, "errors": []} for w in listed]}
    fake.held.add(protocol.INTENTS_LIST)
    core = AppCore.create(fake.path)
    core.connection.open()
    qtbot.waitUntil(lambda: gone in core.workspaces)
    caught_up(qtbot, core.connection)
    listed.remove(gone)  # the folder is deleted; the person presses F5
    core.sync.reload()
    qtbot.waitUntil(lambda: gone not in core.workspaces)
    with qtbot.waitSignal(core.sync.loaded, timeout=5000):
        fake.release()  # the first load's intents/list answers come in last
    caught_up(qtbot, core.connection)
    assert gone not in core.workspaces.paths() and WS in core.workspaces.paths()
    core.connection.close()


def test_nothing_said_of_a_deleted_workspace_brings_it_back(fake: FakeDaemon, qtbot: QtBot) -> None:
    gone = "/w/deleted-since"
    listed = [WS, gone]
    fake.handlers[protocol.WORKSPACES_LIST] = lambda p: {"workspaces": [
        {"workspace": w, "sessions": 1, "pending": 0, "errors": []} for w in listed]}
    core = AppCore.create(fake.path)
    with qtbot.waitSignal(core.sync.loaded, timeout=5000):
        core.connection.open()
    assert gone in core.workspaces
    listed.remove(gone)  # the folder is deleted; the person presses F5
    with qtbot.waitSignal(core.sync.loaded, timeout=5000):
        core.sync.reload()
    assert gone not in core.workspaces
    # What the daemon then says of it: the intents file gone with the folder, the warm-up
    # ending (the app asks for its checkpoints), a call finishing there.
    fake.notify(protocol.INTENTS_ERROR, {"workspace": gone, "error": {
        "file": f"{gone}/.orchestration/active_intents.yaml", "line": 0, "message": "no file"}})
    fake.notify(protocol.INTENTS_CHANGED, {"workspace": gone, "intents": []})
    fake.notify(protocol.CHECKPOINTS_PROGRESS, {"workspace": gone, "phase": "done", "done": 1,
                                                "total": 1})
    fake.notify(protocol.TOOLS_FINISHED, {**ledger_json(gone), "checkpoint_id": "cp-000001"})
    fake.notify(protocol.INTENTS_CHANGED, {"workspace": WS, "intents": [
        intent_json("INT-1"), intent_json("INT-2")]})
    kept = core.workspaces.get(WS)
    assert kept is not None
    qtbot.waitUntil(lambda: len(kept.intents) == 2)
    caught_up(qtbot, core.connection)  # and whatever those notifications made the app ask
    assert gone not in core.workspaces.paths()
    fake.notify(protocol.SESSIONS_OPENED, {"session_id": "s-9", "workspace": gone,
                                           "agent": "a", "mode": "act"})
    qtbot.waitUntil(lambda: gone in core.workspaces)  # a session there: the folder is back
    core.connection.close()
