"""The status bar once the app connects: no stale "Starting the daemon…" beside "Connected"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from intentd.daemon.testing import DaemonProcess
from intentd.gui.app_core import AppCore
from intentd.gui.connection import ConnectionState
from intentd.gui.views.connection_status import STARTING
from intentd.gui.views.main_window import MainWindow


def test_starting_the_daemon_is_dropped_once_connected(
        daemon: DaemonProcess, project: Path, qtbot: QtBot,
        make_window: Callable[..., tuple[MainWindow, AppCore]]) -> None:
    window, core = make_window(daemon.socket_path, project, wait=False)
    bar = window.statusBar()
    bar.showMessage(STARTING, 60000)  # as start_daemon() says it, for longer than a start takes
    assert bar.currentMessage() == STARTING
    core.connection.open()
    qtbot.waitUntil(lambda: core.connection.state == ConnectionState.CONNECTED, timeout=10000)
    assert bar.currentMessage() == ""
    assert "Connected to intentd" in window.connection_status.text()
    bar.showMessage("Restored 1 file(s)", 60000)  # other messages are left alone
    core.connection.state_changed.emit(ConnectionState.CONNECTED)
    assert bar.currentMessage() == "Restored 1 file(s)"
