"""Checkpoints are the same in every view: made by an agent's call, a restore over the socket or
`intentd checkpoints restore` in a terminal, each shows up in the app at once, with its id."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from intentd.gui.app_core import AppCore
from intentd.gui.views.main_window import CHECKPOINTS, MainWindow
from tests.gui.conftest import Agent

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


@pytest.fixture
def daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    """On the socket a terminal's `intentd` finds by itself, with XDG_RUNTIME_DIR=short_dir."""
    with DaemonProcess(short_dir / "intentd" / "intentd.sock", short_dir / "state") as process:
        yield process


def shown_ids(window: MainWindow) -> list[str]:
    model = window.checkpoints_pane.model
    return [model.index(row, 0).data() for row in range(model.rowCount())]


def test_checkpoints_from_an_agent_the_socket_and_the_terminal_appear_live(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot, short_dir: Path) -> None:
    window, core = make_window(daemon.socket_path, project)
    window.show_tab(CHECKPOINTS)
    caller = agent(project, "--path", "src/app.py", "--content", "print('bye')\n")
    qtbot.waitUntil(lambda: len(core.approvals) == 1, timeout=10000)
    core.commands.approve(core.approvals.approvals()[0].id)
    caller.wait(qtbot)
    with Client(daemon.socket_path, timeout=20) as person:
        listed = person.call(protocol.CHECKPOINTS_LIST, {"workspace": str(project)})
        agents = listed["checkpoints"][-1]["id"]
        qtbot.waitUntil(lambda: agents in shown_ids(window), timeout=5000)
        done = person.call(protocol.CHECKPOINTS_RESTORE, {"workspace": str(project),
                                                          "checkpoint_id": agents})
    qtbot.waitUntil(lambda: done["safety_checkpoint_id"] in shown_ids(window), timeout=5000)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(short_dir),
           "XDG_STATE_HOME": str(short_dir / "elsewhere")}  # not the daemon's: only it can answer
    out = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "checkpoints", "restore",
                          done["safety_checkpoint_id"], "--workspace", str(project)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert (project / "src" / "app.py").read_text() == "print('bye')\n"
    terminal = out.stdout.rsplit("undo with: intentd checkpoints restore ", 1)[1].strip()
    qtbot.waitUntil(lambda: terminal in shown_ids(window), timeout=5000)
    assert shown_ids(window)[0] == terminal, "newest first"
