"""`intentd-gui --screenshot`: the real entry point, offscreen, against a real daemon."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.gui.conftest import Agent
from tests.gui.test_connection_e2e import stop

QT_WARNING_MARKERS = ("QWidget", "QObject", "QLayout", "QPainter", "Warning", "qt.")


def run_app(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "intentd.gui.app", *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


def qt_complaints(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if "propagateSizeHints" not in line and any(m in line for m in QT_WARNING_MARKERS)]


def test_screenshot_of_a_pending_request(daemon: DaemonProcess, project: Path,
                                         agent: Callable[..., Agent], short_dir: Path,
                                         qtbot: QtBot) -> None:
    caller = agent(project)
    with Client(daemon.socket_path, timeout=10) as client:
        qtbot.waitUntil(lambda: bool(client.call(protocol.APPROVALS_LIST)["approvals"]),
                        timeout=10000)
    png = short_dir / "shot.png"
    done = run_app("--socket", str(daemon.socket_path), "--workspace", str(project),
                   "--screenshot", str(png))
    assert done.returncode == 0, done.stderr
    assert qt_complaints(done.stderr) == []
    image = QImage(str(png))
    assert (image.width(), image.height()) == (1280, 800)
    assert caller.process.poll() is None  # still waiting: a screenshot answers nothing


def test_screenshot_with_start_daemon_starts_one(short_dir: Path) -> None:
    socket_path, png = short_dir / "auto.sock", short_dir / "auto.png"
    try:
        done = run_app("--socket", str(socket_path), "--start-daemon", "--screenshot", str(png))
    finally:  # the daemon outlives the app by design: stop the one it started
        with Client(socket_path, timeout=10) as client:
            stop(client.initialize("test")["pid"])
    assert done.returncode == 0, done.stderr
    assert QImage(str(png)).width() == 1280


def test_screenshot_without_a_daemon_fails_clearly(short_dir: Path) -> None:
    done = run_app("--socket", str(short_dir / "none.sock"), "--screenshot",
                   str(short_dir / "x.png"), "--screenshot-timeout", "1")
    assert done.returncode == 1
    assert "no daemon at" in done.stderr and not (short_dir / "x.png").exists()
