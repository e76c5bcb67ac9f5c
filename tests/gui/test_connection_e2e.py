"""The connection as a person sees it: a restart of the daemon, and no daemon at all."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from intentd.daemon.testing import DaemonProcess
from intentd.gui.app_core import AppCore
from intentd.gui.connection import ConnectionState
from intentd.gui.views.main_window import MainWindow
from tests.gui.conftest import Agent

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def test_the_app_reconnects_when_the_daemon_comes_back(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, core = make_window(daemon.socket_path, project)
    status = window.connection_status
    assert "Connected" in status.text() and window.connection_banner.isHidden()
    caller = agent(project)
    qtbot.waitUntil(lambda: len(core.approvals) == 1, timeout=10000)
    daemon.stop()
    qtbot.waitUntil(lambda: core.connection.state == ConnectionState.DISCONNECTED)
    assert window.connection_banner.isVisible() and "Disconnected" in status.text()
    assert len(core.approvals) == 0  # a daemon that goes away refuses what waited
    caller.wait(qtbot)  # the daemon refused the pending call as it stopped
    with qtbot.waitSignal(core.sync.loaded, timeout=10000):
        daemon.start()
    assert core.connection.state == ConnectionState.CONNECTED
    assert window.connection_banner.isHidden() and "Connected" in status.text()
    assert len(core.approvals) == 0  # the list was loaded again from the new daemon
    assert window.intents_pane.model.rowCount() == 1


@pytest.fixture
def started_pids() -> Iterator[list[int]]:
    pids: list[int] = []
    yield pids
    for pid in pids:
        stop(pid)


def stop(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM a detached daemon and wait until it is gone (or a zombie), before its folder goes."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    status = Path(f"/proc/{pid}/status")
    while time.monotonic() < deadline:
        try:
            if "State:\tZ" in status.read_text():
                return
        except FileNotFoundError:
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)


def test_without_a_daemon_the_app_offers_to_start_one(
        short_dir: Path, make_window: MakeWindow, started_pids: list[int],
        qtbot: QtBot) -> None:
    window, core = make_window(short_dir / "none.sock", wait=False)
    window.handle_missing_daemon(start_without_asking=False)
    core.connection.open()
    qtbot.waitUntil(lambda: window.daemon_offer is not None and window.daemon_offer.isVisible())
    assert window.connection_banner.isVisible()
    assert window.daemon_offer is not None
    with qtbot.waitSignal(core.sync.loaded, timeout=15000):
        window.daemon_offer.button(QMessageBox.StandardButton.Yes).click()
        assert window.started_daemon_pid is not None
        started_pids.append(window.started_daemon_pid)
    assert core.connection.server_info.get("pid") == window.started_daemon_pid
    assert window.connection_banner.isHidden()
