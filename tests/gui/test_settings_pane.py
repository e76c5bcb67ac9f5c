"""The settings form shows only what the daemon applies, and changes only what was changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.gui.app_core import AppCore
from intentd.gui.connection import ConnectionState
from intentd.gui.views.main_window import APPROVALS, SETTINGS, MainWindow
from intentd.gui.views.settings import SettingsPane
from tests.gui.conftest import FAKE_WORKSPACE
from tests.gui.fake_daemon import FakeDaemon, caught_up

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]
OTHER = "/w/other"


@pytest.fixture
def fake(fake_daemon: FakeDaemon) -> FakeDaemon:
    """Settings in force: reads on, edits off, at most 5 in a row; updates are applied."""
    overrides: dict[str, Any] = {}

    def settings(params: dict[str, Any]) -> dict[str, Any]:
        return {"workspace": params["workspace"],
                "policy": {"auto_approve": {"read": True, "edit": False, "max_consecutive": 5}},
                "overrides": {"auto_approve": dict(overrides)}, "error": None}

    def update(params: dict[str, Any]) -> dict[str, Any]:
        overrides.update(params["auto_approve"])
        return settings(params)

    fake_daemon.handlers[protocol.SETTINGS_GET] = settings
    fake_daemon.handlers[protocol.SETTINGS_UPDATE] = update
    return fake_daemon


def settings_pane(make_window: MakeWindow, fake: FakeDaemon, qtbot: QtBot
                  ) -> tuple[SettingsPane, AppCore]:
    window, core = make_window(fake.path)
    window.show_tab(SETTINGS)
    pane = window.settings_pane
    qtbot.waitUntil(pane.switches["edit"].isEnabled)
    caught_up(qtbot, core.connection)  # nothing else on its way that would redraw the form
    return pane, core


def updates(fake: FakeDaemon, core: AppCore, qtbot: QtBot) -> list[dict[str, Any]]:
    caught_up(qtbot, core.connection)
    return [p["auto_approve"] for p in fake.params_of(protocol.SETTINGS_UPDATE)]


def test_a_refused_update_shows_the_settings_in_force_again(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    pane, core = settings_pane(make_window, fake, qtbot)

    def refuse(_params: dict[str, Any]) -> Any:
        raise ValueError("the policy says no")

    fake.handlers[protocol.SETTINGS_UPDATE] = refuse
    edits = pane.switches["edit"]
    assert not edits.isChecked()
    with qtbot.waitSignal(core.commands.command_failed) as failure:
        edits.click()
    assert failure.args == ["Could not change the settings: the policy says no"]
    assert not edits.isChecked()  # what the daemon applies, not what was asked for
    assert updates(fake, core, qtbot) == [{"edit": True}]


def test_the_form_is_disabled_while_disconnected(fake: FakeDaemon, make_window: MakeWindow,
                                                 qtbot: QtBot) -> None:
    pane, core = settings_pane(make_window, fake, qtbot)
    fake.stop()
    qtbot.waitUntil(lambda: core.connection.state != ConnectionState.CONNECTED)
    assert not any(box.isEnabled() for box in pane.switches.values())
    assert not pane.limit.isEnabled()
    assert pane.switches["read"].isChecked()  # still showing what was last in force
    fake.start()
    qtbot.waitUntil(pane.switches["edit"].isEnabled, timeout=5000)


def test_the_limit_is_sent_when_changed_even_to_0_and_not_when_left_unchanged(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    pane, core = settings_pane(make_window, fake, qtbot)
    assert pane.limit.value() == 5
    qtbot.keyClick(pane.limit, Qt.Key.Key_Return)  # Enter on the field, unchanged
    assert updates(fake, core, qtbot) == []
    pane.limit.selectAll()
    qtbot.keyClicks(pane.limit, "0")
    qtbot.keyClick(pane.limit, Qt.Key.Key_Return)
    assert updates(fake, core, qtbot) == [{"max_consecutive": 0}]
    assert pane.limit.value() == 0
    qtbot.keyClick(pane.limit, Qt.Key.Key_Return)  # 0 is in force now: no change
    assert updates(fake, core, qtbot) == [{"max_consecutive": 0}]


def test_settings_are_asked_for_when_the_settings_tab_shows(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    fake.handlers[protocol.WORKSPACES_LIST] = lambda p: {"workspaces": [
        {"workspace": path, "sessions": 0, "pending": 0, "errors": []}
        for path in (FAKE_WORKSPACE, OTHER)]}
    window, core = make_window(fake.path)

    def asked() -> list[str]:
        caught_up(qtbot, core.connection)
        return [p["workspace"] for p in fake.params_of(protocol.SETTINGS_GET)]

    assert window.current_workspace() == FAKE_WORKSPACE
    window.select_workspace(OTHER)
    assert asked() == []  # the Settings tab is not shown
    window.show_tab(SETTINGS)
    assert asked() == [OTHER]
    window.select_workspace(FAKE_WORKSPACE)
    assert asked() == [OTHER, FAKE_WORKSPACE]  # once per switch
    window.show_tab(APPROVALS)
    window.select_workspace(OTHER)
    assert asked() == [OTHER, FAKE_WORKSPACE]
