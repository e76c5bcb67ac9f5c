"""The desktop app says whether commands are confined, and shows what the scope audit undid."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.sandbox.landlock import FORCE_ABI_ENV, kernel_abi
from intentd.daemon.testing import DaemonProcess, make_workspace
from intentd.gui.app_core import AppCore
from intentd.gui.models.activity import sandbox_words
from intentd.gui.state.records import LedgerEntry
from intentd.gui.views.main_window import MainWindow
from tests.gui.conftest import OpenedUrls
from tests.gui.factories import ledger_json
from tests.server.helpers import open_session

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]
pytestmark = [pytest.mark.gui, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")]


@pytest.fixture
def make_window(qtbot: QtBot) -> Iterator[MakeWindow]:
    """A main window on a socket, connected and loaded."""
    cores: list[AppCore] = []

    def make(socket_path: Path, workspace: Path) -> tuple[MainWindow, AppCore]:
        core = AppCore.create(socket_path, [str(workspace)])
        window = MainWindow(core, str(workspace), open_url=OpenedUrls())
        qtbot.addWidget(window)
        window.show()
        cores.append(core)
        with qtbot.waitSignal(core.sync.loaded, timeout=10000):
            core.connection.open()
        return window, core

    yield make
    for core in cores:
        core.connection.close()


@pytest.fixture
def project(short_dir: Path) -> Path:
    return make_workspace(short_dir / "proj", files={"src/app.py": "print('hi')\n",
                                                     "docs/guide.md": "# guide\n"},
                          policy={"auto_approve": {"all_commands": True}}).resolve()


@pytest.fixture
def unconfined_daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    with DaemonProcess(short_dir / "d.sock", short_dir / "state", {FORCE_ABI_ENV: "0"}) as daemon:
        yield daemon


@pytest.fixture
def daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as process:
        yield process


def test_the_status_bar_says_commands_run_unconfined(unconfined_daemon: DaemonProcess,
                                                      project: Path, make_window: MakeWindow) -> None:
    window, _core = make_window(unconfined_daemon.socket_path, project)
    status = window.sandbox_status
    assert status.isVisible() and "UNCONFINED" in status.text()
    assert FORCE_ABI_ENV in status.toolTip()


@pytest.mark.skipif(kernel_abi() < 1, reason="needs a kernel with Landlock")
def test_the_status_bar_says_commands_are_confined(daemon: DaemonProcess, project: Path,
                                                   make_window: MakeWindow) -> None:
    window, _core = make_window(daemon.socket_path, project)
    assert "Commands confined" in window.sandbox_status.text()
    assert "Landlock ABI" in window.sandbox_status.toolTip()


def test_activity_names_what_the_scope_audit_undid(daemon: DaemonProcess, project: Path,
                                                   make_window: MakeWindow, qtbot: QtBot) -> None:
    window, core = make_window(daemon.socket_path, project)
    agent = Client(daemon.socket_path, timeout=30).connect()
    try:
        agent.initialize("claude-code")
        session_id = open_session(agent, project)
        grant = agent.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id,
                                                      "tool": "execute_command",
                                                      "args": {"command": "make"}})
        (project / "docs" / "stray.md").write_text("outside the scope\n")
        agent.call(protocol.TOOLS_REPORT, {"session_id": session_id, "call_id": grant["call_id"],
                                           "ok": True, "output": "done"})
    finally:
        agent.close()
    model = window.activity_pane.model
    qtbot.waitUntil(lambda: any(e.call_id == grant["call_id"] and e.result != "not_run"
                                for e in core.activity.entries()), timeout=10000)
    row = next(r for r in range(model.rowCount())
               if model.entry_at(r) and model.entry_at(r).call_id == grant["call_id"]
               and model.entry_at(r).undone)
    reason = model.index(row, 6).data()
    assert "undone, outside the scope: docs/stray.md" in reason
    assert not (project / "docs" / "stray.md").exists()


def test_activity_says_a_command_ran_unconfined_and_what_report_mode_left(
        unconfined_daemon: DaemonProcess, short_dir: Path, make_window: MakeWindow,
        qtbot: QtBot) -> None:
    project = make_workspace(short_dir / "rep", files={"src/app.py": "x\n", "docs/guide.md": "g\n"},
                             policy={"auto_approve": {"all_commands": True},
                                     "scope_audit": "report"}).resolve()
    window, _core = make_window(unconfined_daemon.socket_path, project)
    agent = Client(unconfined_daemon.socket_path, timeout=30).connect()
    try:
        agent.initialize("agent")
        session_id = open_session(agent, project)
        answer = agent.call(protocol.TOOLS_CALL, {
            "session_id": session_id, "tool": "execute_command",
            "args": {"command": "python3 -c \"open('docs/left.md', 'w').write('x')\""}})
    finally:
        agent.close()
    model = window.activity_pane.model

    def audited_row() -> int:
        """The call's row once its receipt (with the audit) is in; -1 before."""
        for row in range(model.rowCount()):
            entry = model.entry_at(row)
            if entry is not None and entry.call_id == answer["call_id"] and entry.out_of_scope:
                return row
        return -1

    qtbot.waitUntil(lambda: audited_row() >= 0, timeout=10000)
    reason = model.index(audited_row(), 6).data()
    assert "outside the scope, left in place: docs/left.md" in reason
    assert "ran UNCONFINED" in reason and FORCE_ABI_ENV in reason
    assert (project / "docs" / "left.md").exists()


def test_activity_says_when_the_scope_audit_could_not_run() -> None:
    """The audit's failure is in the receipt (tests/sandbox/test_audit_failure.py); Activity
    must show it, not an empty row as if all stayed in scope."""
    receipt = {"result": "success", "data": {"scope_audit": {
        "mode": "restore", "checkpoint_id": "cp-000007", "error": "unknown checkpoint cp-000007",
        "message": "[scope audit failed: ...]"}}}
    entry = LedgerEntry.from_json(ledger_json(tool="execute_command", receipt=receipt))
    assert sandbox_words(entry) == (" — scope audit FAILED (unknown checkpoint cp-000007): "
                                    "changes outside the scope may remain")
