"""The approval pane answers the request shown, once, and never one that just slid into view."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.gui.app_core import AppCore
from intentd.gui.views.approvals import ApprovalsPane
from intentd.gui.views.main_window import MainWindow
from tests.gui.conftest import FAKE_WORKSPACE
from tests.gui.factories import approval_json
from tests.gui.fake_daemon import FakeDaemon, caught_up

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


@pytest.fixture
def fake(fake_daemon: FakeDaemon) -> FakeDaemon:
    fake_daemon.handlers[protocol.APPROVALS_RESPOND] = lambda p: {"resolved": True}
    return fake_daemon


def queued(fake: FakeDaemon, count: int) -> list[str]:
    """`count` approvals waiting before the app connects; their ids, newest first."""
    fake.pending.extend(approval_json(FAKE_WORKSPACE, created_at=float(n)) for n in range(count))
    return [a["id"] for a in reversed(fake.pending)]


def answered(fake: FakeDaemon, core: AppCore, qtbot: QtBot) -> list[tuple[str, str]]:
    """Every answer the daemon received, as (approval id, decision)."""
    caught_up(qtbot, core.connection)
    return [(p["approval_id"], p["decision"]) for p in fake.params_of(protocol.APPROVALS_RESPOND)]


def open_window(make_window: MakeWindow, fake: FakeDaemon, qtbot: QtBot
                ) -> tuple[MainWindow, ApprovalsPane, AppCore]:
    window, core = make_window(fake.path)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return window, window.approvals_pane, core


def shown_id(pane: ApprovalsPane) -> str | None:
    approval = pane.current()
    return approval.id if approval else None


def ctrl(qtbot: QtBot, pane: ApprovalsPane, key: Qt.Key) -> None:
    qtbot.keyClick(pane.table, key, Qt.KeyboardModifier.ControlModifier)


def test_a_double_click_on_approve_answers_the_request_shown_once(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    newest, older = queued(fake, 2)
    window, pane, core = open_window(make_window, fake, qtbot)
    qtbot.waitUntil(pane.approve_button.isEnabled)
    assert shown_id(pane) == newest
    qtbot.mouseClick(pane.approve_button, Qt.MouseButton.LeftButton)
    assert not pane.approve_button.isEnabled()  # while the answer is on its way
    qtbot.mouseClick(pane.approve_button, Qt.MouseButton.LeftButton)  # the double click
    qtbot.waitUntil(lambda: newest not in core.approvals)
    assert shown_id(pane) == older  # the next request is shown...
    qtbot.mouseClick(pane.approve_button, Qt.MouseButton.LeftButton)  # a slow second click
    assert answered(fake, core, qtbot) == [(newest, protocol.APPROVE)]  # ...but not answered
    qtbot.waitUntil(pane.approve_button.isEnabled)  # once it has been on screen a moment
    qtbot.mouseClick(pane.approve_button, Qt.MouseButton.LeftButton)
    assert answered(fake, core, qtbot) == [(newest, protocol.APPROVE), (older, protocol.APPROVE)]


def test_a_request_leaving_by_itself_does_not_pass_a_keypress_to_the_next(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    newest, middle, _oldest = queued(fake, 3)
    window, pane, core = open_window(make_window, fake, qtbot)
    qtbot.waitUntil(pane.approve_button.isEnabled)
    assert shown_id(pane) == newest
    fake.notify(protocol.APPROVALS_RESOLVED, {"approval_id": newest, "resolution": "withdrawn",
                                              "feedback": None})
    qtbot.waitUntil(lambda: newest not in core.approvals)
    assert shown_id(pane) == middle  # the next (older) one slid into its place
    ctrl(qtbot, pane, Qt.Key.Key_Return)  # pressed for the one that left
    assert answered(fake, core, qtbot) == []
    assert window.statusBar().currentMessage() == ApprovalsPane.NOT_YET
    qtbot.waitUntil(pane.approve_button.isEnabled)
    ctrl(qtbot, pane, Qt.Key.Key_Return)
    assert answered(fake, core, qtbot) == [(middle, protocol.APPROVE)]


def test_a_request_arriving_into_an_empty_queue_waits_before_it_can_be_answered(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, pane, core = open_window(make_window, fake, qtbot)
    arriving = approval_json(FAKE_WORKSPACE)
    fake.notify(protocol.APPROVALS_REQUESTED, arriving)
    qtbot.waitUntil(lambda: shown_id(pane) == arriving["id"])  # shown at once
    assert pane.detail_stack.currentIndex() == 1 and not pane.reject_button.isEnabled()
    ctrl(qtbot, pane, Qt.Key.Key_Backspace)  # a keypress already on its way
    assert answered(fake, core, qtbot) == []
    qtbot.waitUntil(pane.reject_button.isEnabled)
    ctrl(qtbot, pane, Qt.Key.Key_Backspace)
    assert answered(fake, core, qtbot) == [(arriving["id"], protocol.REJECT)]


def test_ctrl_return_with_feedback_written_does_not_approve(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    [only] = queued(fake, 1)
    window, pane, core = open_window(make_window, fake, qtbot)
    qtbot.waitUntil(pane.approve_button.isEnabled)
    qtbot.keyClicks(pane.feedback, "use pathlib")
    qtbot.keyClick(pane.feedback, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answered(fake, core, qtbot) == []
    assert window.statusBar().currentMessage() == ApprovalsPane.FEEDBACK_NOT_APPROVED
    assert "Ctrl+Backspace to reject" in ApprovalsPane.FEEDBACK_NOT_APPROVED
    assert pane.feedback.text() == "use pathlib"  # kept
    qtbot.keyClick(pane.feedback, Qt.Key.Key_Backspace, Qt.KeyboardModifier.ControlModifier)
    assert answered(fake, core, qtbot) == [(only, protocol.REJECT)]
    assert fake.params_of(protocol.APPROVALS_RESPOND)[0]["feedback"] == "use pathlib"


def test_an_answer_lost_with_the_connection_can_be_given_again(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    [only] = queued(fake, 1)
    fake.silent.add(protocol.APPROVALS_RESPOND)
    window, pane, core = open_window(make_window, fake, qtbot)
    qtbot.waitUntil(pane.approve_button.isEnabled)
    pane.approve_current()
    pane.approve_current()  # still on its way: not sent again
    caught_up(qtbot, core.connection)
    assert len(fake.params_of(protocol.APPROVALS_RESPOND)) == 1
    fake.silent.clear()
    with qtbot.waitSignal(core.sync.loaded, timeout=10000):
        for client in fake.clients:
            client.abort()  # the daemon never answered; the app reconnects and loads again
    assert shown_id(pane) == only  # the daemon still has it waiting
    qtbot.waitUntil(pane.approve_button.isEnabled)
    pane.approve_current()
    qtbot.waitUntil(lambda: only not in core.approvals)
    assert [p["approval_id"] for p in fake.params_of(protocol.APPROVALS_RESPOND)] == [only] * 2
