"""Intents, the broken-file banner, activity, checkpoints and settings against a real daemon."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, write_intents
from intentd.gui.app_core import AppCore
from intentd.gui.views.main_window import ACTIVITY, CHECKPOINTS, INTENTS, SETTINGS, MainWindow
from tests.gui.conftest import Agent, OpenedUrls

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def intent_ids(window: MainWindow) -> list[str]:
    model = window.intents_pane.model
    return [model.index(r, 0).data() for r in range(model.rowCount())]


def test_an_intents_edit_shows_up_and_selections_are_shown(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path, project)
    assert window.current_workspace() == str(project)
    assert intent_ids(window) == ["INT-1"]
    write_intents(project, make_intent("INT-1"),
                  make_intent("INT-2", name="docs", status="BLOCKED",
                              constraints=["no API change"], acceptance_criteria=["builds"]))
    qtbot.waitUntil(lambda: intent_ids(window) == ["INT-1", "INT-2"], timeout=5000)
    window.intents_pane.table.selectRow(1)
    details = window.intents_pane.detail.toPlainText()
    assert "BLOCKED" in details and "no API change" in details and "builds" in details
    with Client(daemon.socket_path, timeout=10) as client:
        session = client.call(protocol.SESSIONS_OPEN, {"workspace": str(project)})["session_id"]
        client.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
        model = window.intents_pane.model
        qtbot.waitUntil(lambda: model.index(0, 3).data() == session, timeout=5000)


def test_warnings_about_the_intents_file_follow_its_edits(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(INTENTS)
    warnings = window.intents_pane.warnings
    assert warnings.isHidden()
    write_intents(project, make_intent("INT-1", colour="blue"))
    qtbot.waitUntil(lambda: warnings.isVisible() and "'colour'" in warnings.text(),
                    timeout=5000)
    write_intents(project, make_intent("INT-1"))
    qtbot.waitUntil(warnings.isHidden, timeout=5000)


def test_a_broken_intents_file_shows_a_banner_and_keeps_the_last_good_intents(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, opened_urls: OpenedUrls,
        qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(INTENTS)
    banner = window.intents_pane.banner
    assert banner.isHidden()
    intents_file = project / ".orchestration" / "active_intents.yaml"
    intents_file.write_text("active_intents:\n  - id: INT-1\n    name: [unclosed\n")
    qtbot.waitUntil(banner.isVisible, timeout=5000)
    assert f"{intents_file}:" in banner.text()
    assert intent_ids(window) == ["INT-1"]  # the last good intents stay listed
    mark = window.workspaces_model.index(0).data(Qt.ItemDataRole.DecorationRole)
    assert mark is not None  # the workspace list marks the broken workspace
    banner.button.click()
    assert opened_urls.urls == [QUrl.fromLocalFile(str(intents_file))]
    write_intents(project, make_intent("INT-1"), make_intent("INT-3"))
    qtbot.waitUntil(lambda: banner.isHidden() and intent_ids(window) == ["INT-1", "INT-3"],
                    timeout=5000)


def test_activity_lists_decisions_live_and_filters_them(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, core = make_window(daemon.socket_path, project)
    caller = agent(project)
    qtbot.waitUntil(lambda: len(core.approvals) == 1, timeout=10000)
    core.commands.approve(core.approvals.approvals()[0].id)
    caller.wait(qtbot)
    pane = window.activity_pane
    window.show_tab(ACTIVITY)
    qtbot.waitUntil(lambda: any(e.tool == "write_to_file" for e in core.activity.entries()))
    tools = {pane.proxy.index(r, 3).data() for r in range(pane.proxy.rowCount())}
    assert {"select_active_intent", "write_to_file"} <= tools
    window.filter_activity()
    qtbot.keyClicks(pane.filter, "write_to")
    assert {pane.proxy.index(r, 3).data() for r in range(pane.proxy.rowCount())} == {
        "write_to_file"}
    assert pane.proxy.index(0, 4).data() == "allow (person)"


def test_a_checkpoint_diffs_against_now_and_restores_after_confirmation(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, core = make_window(daemon.socket_path, project)
    caller = agent(project, "--path", "src/app.py", "--content", "print('bye')\n")
    qtbot.waitUntil(lambda: len(core.approvals) == 1, timeout=10000)
    core.commands.approve(core.approvals.approvals()[0].id)
    caller.wait(qtbot)
    pane = window.checkpoints_pane
    window.show_tab(CHECKPOINTS)
    qtbot.waitUntil(lambda: pane.model.rowCount() == 1, timeout=5000)
    qtbot.waitUntil(lambda: "+print('bye')" in pane.diff.unified.toPlainText(), timeout=5000)
    assert "-print('hi')" in pane.diff.unified.toPlainText()
    pane.restore_button.click()
    box = pane.confirmation
    assert box is not None and box.isVisible()
    assert f"to {pane.current().id} (" in box.text()  # type: ignore[union-attr]
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: (project / "src/app.py").read_text() == "print('hi')\n",
                    timeout=5000)
    qtbot.waitUntil(lambda: "safety checkpoint" in pane.status.text())


def test_an_auto_approve_switch_is_sent_to_the_daemon(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(SETTINGS)  # settings are asked for when shown
    edits = window.settings_pane.switches["edit"]
    qtbot.waitUntil(edits.isEnabled)
    assert not edits.isChecked() and window.settings_pane.switches["read"].isChecked()
    edits.click()
    with Client(daemon.socket_path, timeout=10) as client:
        qtbot.waitUntil(lambda: client.call(protocol.SETTINGS_GET, {"workspace": str(project)})
                        ["overrides"]["auto_approve"].get("edit") is True, timeout=5000)
    # the daemon has it; the app shows it once its own answer comes back
    qtbot.waitUntil(lambda: edits.isChecked() and "overrides" in edits.toolTip(), timeout=5000)
