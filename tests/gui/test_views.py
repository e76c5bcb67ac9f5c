"""Views without a daemon: keyboard reach, tray notifications, settings, banners."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from intentd.gui.app_core import AppCore
from intentd.gui.state.records import Approval
from intentd.gui.tray import TrayNotifier
from intentd.gui.views.main_window import APPROVALS, INTENTS, SETTINGS, MainWindow
from tests.gui.conftest import OpenedUrls
from tests.gui.factories import approval_json


@pytest.fixture
def window(short_dir: Path, qtbot: QtBot, opened_urls: OpenedUrls) -> Iterator[MainWindow]:
    core = AppCore.create(short_dir / "nobody.sock")  # never opened: no daemon needed
    win = MainWindow(core, open_url=opened_urls)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    core.connection.close()


def test_every_tab_is_a_keystroke_away(window: MainWindow, qtbot: QtBot) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    for index in (INTENTS, SETTINGS, APPROVALS):
        qtbot.keyClick(window, Qt.Key(Qt.Key.Key_1 + index), Qt.KeyboardModifier.ControlModifier)
        assert window.tabs.currentIndex() == index
    assert window.approvals_pane.table.hasFocus()  # the keys go on to the queue itself
    shortcuts = {a.text(): a.shortcut().toString() for a in window.findChildren(
        type(window.approve_action)) if not a.shortcut().isEmpty()}
    assert shortcuts["&Approve"] == "Ctrl+Return"
    assert shortcuts["&Reject with feedback"] == "Ctrl+Backspace"
    assert shortcuts["&Open intents file in editor"] == "Ctrl+E"
    assert len(shortcuts) == len(set(shortcuts.values())), "a key bound twice is ambiguous"
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()


def test_the_window_is_usable_at_1280_by_800(window: MainWindow) -> None:
    assert (window.width(), window.height()) == (1280, 800)
    assert window.minimumSizeHint().width() <= 1280 and window.minimumSizeHint().height() <= 800


def test_a_request_in_the_background_notifies(window: MainWindow, qtbot: QtBot) -> None:
    notifier = TrayNotifier(window, window.core.approvals, window)
    other = QWidget()  # another app's window, in front
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())
    window.core.approvals.add(Approval.from_json(approval_json()))
    assert notifier.notified == 1
    qtbot.waitUntil(lambda: window.windowTitle() == "(1) intentd")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.core.approvals.add(Approval.from_json(approval_json()))
    assert notifier.notified == 1  # seen: no notification
    qtbot.waitUntil(lambda: window.windowTitle() == "(2) intentd")


def test_settings_show_the_policy_error_and_the_values_in_force(window: MainWindow) -> None:
    registry = window.core.workspaces
    registry.ensure("/w/proj")
    window.select_workspace("/w/proj")
    pane = window.settings_pane
    assert not pane.switches["edit"].isEnabled()  # not loaded yet
    registry.set_settings("/w/proj", {
        "workspace": "/w/proj", "policy": {"auto_approve": {"read": True, "edit": False,
                                                            "max_consecutive": 5}},
        "overrides": {"auto_approve": {"edit": True}},
        "error": {"file": "/w/proj/.orchestration/policy.yaml", "line": 2, "message": "bad"}})
    assert pane.switches["edit"].isChecked() and pane.switches["read"].isChecked()
    assert pane.limit.value() == 5
    assert not pane.banner.isHidden() and "policy.yaml:2: bad" in pane.banner.text()


def test_the_open_button_opens_the_intents_file(window: MainWindow,
                                                opened_urls: OpenedUrls) -> None:
    window.core.workspaces.ensure("/w/proj")
    window.select_workspace("/w/proj")
    window.intents_pane.open_button.click()
    assert [u.toLocalFile() for u in opened_urls.urls] == [
        "/w/proj/.orchestration/active_intents.yaml"]
