"""GUI tests: offscreen Qt, any Qt warning fails a test, a real daemon and a stand-in agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QUrl  # noqa: E402
from pytestqt.qtbot import QtBot  # noqa: E402

import intentd.gui  # noqa: E402,F401 - applies the PySide6 workaround before any Qt call
from intentd.daemon.testing import DaemonProcess, make_workspace  # noqa: E402
from intentd.gui.app_core import AppCore  # noqa: E402
from intentd.gui.views.main_window import MainWindow  # noqa: E402
from tests.gui.fake_daemon import FakeDaemon, loading_handlers  # noqa: E402

HERE = Path(__file__).parent
AGENT = HERE / "agent.py"
# The offscreen platform plugin warns about a window feature it lacks; not a bug of ours.
OFFSCREEN_NOISE = r"This plugin does not support propagateSizeHints\(\)"
FAKE_WORKSPACE = "/w/proj"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.gui)
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture
def fake_daemon(short_dir: Path) -> Iterator[FakeDaemon]:
    """An in-process stand-in for the daemon, for exact control of what it says and when.

    It answers the loading requests (one workspace, FAKE_WORKSPACE, and the approvals put in
    its `pending` list) and records every request."""
    fake = FakeDaemon(short_dir / "fake.sock").start()
    fake.handlers.update(loading_handlers(fake.pending, FAKE_WORKSPACE))
    yield fake
    fake.stop()


@pytest.fixture
def project(short_dir: Path) -> Path:
    """A workspace with INT-1 (IN_PROGRESS, owned_scope src/**) and one source file."""
    return make_workspace(short_dir / "proj", files={"src/app.py": "print('hi')\n"}).resolve()


@dataclass
class Agent:
    """A stand-in agent process; its answers (tools/call results) arrive as JSON lines."""

    process: subprocess.Popen[str]
    answers: list[dict[str, Any]] = field(default_factory=list)

    def finished(self) -> bool:
        return self.process.poll() is not None

    def wait(self, qtbot: QtBot, timeout: int = 15000) -> list[dict[str, Any]]:
        qtbot.waitUntil(self.finished, timeout=timeout)
        out, err = self.process.communicate()
        lines = [json.loads(line) for line in out.splitlines() if line.strip()]
        assert self.process.returncode == 0, err
        self.answers = [line for line in lines if "ready" not in line]
        return self.answers


@pytest.fixture
def agent(daemon: DaemonProcess) -> Iterator[Callable[..., Agent]]:
    started: list[Agent] = []

    def start(workspace: Path, *args: str) -> Agent:
        process = subprocess.Popen(
            [sys.executable, str(AGENT), str(daemon.socket_path), str(workspace), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(Agent(process))
        return started[-1]

    yield start
    for each in started:
        if each.process.poll() is None:
            each.process.kill()
        each.process.communicate()


@dataclass
class OpenedUrls:
    urls: list[QUrl] = field(default_factory=list)

    def __call__(self, url: QUrl) -> bool:
        self.urls.append(url)
        return True


@pytest.fixture
def opened_urls() -> OpenedUrls:
    return OpenedUrls()


@pytest.fixture
def make_window(qtbot: QtBot, opened_urls: OpenedUrls
                ) -> Iterator[Callable[..., tuple[MainWindow, AppCore]]]:
    """A main window on a socket, connected and loaded (unless told not to wait)."""
    cores: list[AppCore] = []

    def make(socket_path: Path, workspace: Path | None = None,
             wait: bool = True) -> tuple[MainWindow, AppCore]:
        extra = [str(workspace)] if workspace else []
        core = AppCore.create(socket_path, extra)
        window = MainWindow(core, str(workspace) if workspace else None, open_url=opened_urls)
        qtbot.addWidget(window)
        window.show()
        cores.append(core)
        if wait:
            with qtbot.waitSignal(core.sync.loaded, timeout=10000):
                core.connection.open()
        return window, core

    yield make
    for core in cores:
        core.connection.close()
