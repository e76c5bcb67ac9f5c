"""The app's sidebar against a real daemon: namesakes named by their parent folder, and a
workspace whose folder is gone dropped at the next reload."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace
from intentd.gui.app_core import AppCore
from intentd.gui.views.main_window import MainWindow
from tests.server.helpers import open_session


def names(window: MainWindow) -> list[str]:
    model = window.workspaces_model
    return [model.index(row).data() for row in range(model.rowCount())]


def test_namesakes_are_told_apart_and_a_deleted_folder_is_dropped(
        daemon: DaemonProcess, short_dir: Path, qtbot: QtBot,
        make_window: Callable[..., tuple[MainWindow, AppCore]]) -> None:
    work = make_workspace(short_dir / "work" / "app").resolve()
    play = make_workspace(short_dir / "play" / "app").resolve()
    with Client(daemon.socket_path, timeout=20) as agent:
        agent.initialize("agent")
        open_session(agent, work, select=False)
        open_session(agent, play, select=False)
        window, _core = make_window(daemon.socket_path)
        qtbot.waitUntil(lambda: sorted(names(window)) == ["play/app", "work/app"], timeout=5000)
        shutil.rmtree(play)
        # A load already in flight may still list the folder; the next one must drop it.
        window.reload()
        qtbot.waitUntil(lambda: names(window) == ["app"], timeout=10000)
        qtbot.waitUntil(lambda: window.workspaces_model.path_at(0) == str(work))
