"""The approval queue against a real daemon and a stand-in agent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from intentd.daemon.testing import DaemonProcess
from intentd.gui.app_core import AppCore
from intentd.gui.views.main_window import MainWindow
from tests.gui.conftest import Agent

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def rows(window: MainWindow) -> int:
    return window.approvals_pane.model.rowCount()


def activate(window: MainWindow, qtbot: QtBot) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def wait_answerable(window: MainWindow, qtbot: QtBot) -> None:
    """Approve and Reject pause after the request shown changes; a person reads it meanwhile."""
    qtbot.waitUntil(window.approvals_pane.approve_button.isEnabled)


def test_a_request_appears_in_the_queue(daemon: DaemonProcess, project: Path,
                                        agent: Callable[..., Agent], make_window: MakeWindow,
                                        qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    agent(project)
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)
    model = window.approvals_pane.model
    cells = [model.index(0, c).data() for c in range(model.columnCount())]
    assert cells[1:7] == ["write_to_file", "src/x.py", "+def answer() -> int:  ⏎  +    return 42",
                          "proj", cells[5], "INT-1"]
    assert cells[5].startswith("s-") and "edits" in cells[7]
    pane = window.approvals_pane
    approval = pane.current()
    assert approval is not None and approval.workspace == str(project)
    assert pane.diff.unified.toPlainText().splitlines()[:2] == ["--- a/src/x.py",
                                                                "+++ b/src/x.py"]
    assert "+    return 42" in pane.diff.unified.toPlainText()
    qtbot.waitUntil(lambda: window.tabs.tabText(0) == "Approvals (1)")
    assert window.workspaces_model.index(0).data() == "proj  (1 pending)"


def test_approving_with_the_keyboard_completes_the_agents_call(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    caller = agent(project)
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)
    activate(window, qtbot)
    wait_answerable(window, qtbot)
    qtbot.keyClick(window.approvals_pane.table, Qt.Key.Key_Return,
                   Qt.KeyboardModifier.ControlModifier)
    [answer] = caller.wait(qtbot)
    assert answer["decision"] == "allow" and answer["approved_by"] == "person"
    assert answer["result"]["ok"] is True
    assert (project / "src/x.py").read_text() == "def answer() -> int:\n    return 42\n"
    qtbot.waitUntil(lambda: rows(window) == 0 and window.tabs.tabText(0) == "Approvals")


def test_rejecting_sends_the_feedback_and_selects_the_next_request(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    caller = agent(project, "--count", "2")
    qtbot.waitUntil(lambda: rows(window) == 2, timeout=10000)
    pane = window.approvals_pane
    order = [pane.model.approval_at(r).args["path"] for r in range(2)]  # type: ignore[union-attr]
    assert order == ["src/x_1.py", "src/x_0.py"]  # newest first
    activate(window, qtbot)
    qtbot.keyClick(pane.table, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    first = pane.current()
    assert first is not None and first.args["path"] == "src/x_1.py"
    wait_answerable(window, qtbot)
    qtbot.keyClicks(pane.feedback, "use pathlib instead")
    qtbot.keyClick(pane.feedback, Qt.Key.Key_Return)  # Enter in the feedback field rejects
    qtbot.waitUntil(lambda: rows(window) == 1)
    nxt = pane.current()
    assert nxt is not None and nxt.args["path"] == "src/x_0.py"
    assert pane.feedback.text() == ""
    pane.table.setFocus()
    wait_answerable(window, qtbot)
    qtbot.keyClick(pane.table, Qt.Key.Key_Backspace, Qt.KeyboardModifier.ControlModifier)
    answers = caller.wait(qtbot)
    by_feedback = {a["feedback"]: a for a in answers}
    assert set(by_feedback) == {"use pathlib instead", None}
    for answer in answers:
        assert (answer["decision"], answer["stage"]) == ("deny", "approval")
    assert not (project / "src/x_1.py").exists()
    assert rows(window) == 0 and pane.current() is None


def test_a_request_withdrawn_by_its_agent_leaves_the_queue(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    caller = agent(project)
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)
    caller.process.kill()
    qtbot.waitUntil(lambda: rows(window) == 0, timeout=5000)
