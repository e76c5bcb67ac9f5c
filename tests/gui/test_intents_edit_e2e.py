"""Editing intents in the app against a real daemon: the scope editor's live preview, "add to this
intent's scope" from a call refused at `scope` and from an approval outside its intent, a save
over a hand edit, and new / start / abandon / complete / remove."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.engine.intents import load_intents
from intentd.daemon.testing import DaemonProcess, write_policy
from intentd.gui.app_core import AppCore
from intentd.gui.views.intent_dialog import NewIntentDialog
from intentd.gui.views.main_window import ACTIVITY, INTENTS, MainWindow
from intentd.gui.views.scope_editor import ScopeEditorDialog
from tests.gui.conftest import Agent

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def scope_of(project: Path, intent_id: str) -> tuple[str, ...]:
    intent = load_intents(project / ".orchestration" / "active_intents.yaml").get(intent_id)
    assert intent is not None
    return intent.owned_scope


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def status_of(project: Path, intent_id: str) -> str:
    intent = load_intents(project / ".orchestration" / "active_intents.yaml").get(intent_id)
    assert intent is not None
    return intent.status


def add_files(project: Path) -> None:
    for name in ("docs/guide.md", "src/secret/key.py", "src/lib.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")


def open_editor(window: MainWindow, qtbot: QtBot) -> ScopeEditorDialog:
    qtbot.waitUntil(lambda: isinstance(window.intents_pane.dialog, ScopeEditorDialog))
    dialog = window.intents_pane.dialog
    assert isinstance(dialog, ScopeEditorDialog)
    qtbot.waitUntil(lambda: dialog.last_preview is not None, timeout=5000)
    return dialog


def offer_from_the_last_refusal(window: MainWindow, qtbot: QtBot) -> ScopeEditorDialog:
    """Activity's newest row (a refusal at scope): "Add to this intent's scope…", its editor."""
    window.show_tab(ACTIVITY)
    table, action = window.activity_pane.table, window.activity_scope_action

    def refusal_selected() -> bool:  # rows arrive one by one: the refusal may not be in yet
        table.selectRow(table.model().rowCount() - 1)
        return action.isEnabled()

    qtbot.waitUntil(refusal_selected, timeout=5000)
    action.trigger()
    return open_editor(window, qtbot)


def test_the_scope_editor_previews_each_change_and_saves_it(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    add_files(project)
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(INTENTS)
    window.intents_pane.table.selectRow(0)
    qtbot.mouseClick(window.intents_pane.edit_buttons["scope"], Qt.MouseButton.LeftButton)
    dialog = open_editor(window, qtbot)
    assert dialog.text.toPlainText() == "src/**"
    assert "3 of 4 files match now; this change adds 0 and removes 0" in dialog.summary.text()
    dialog.text.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return)
    qtbot.keyClicks(dialog.text, "!src/secret/**")
    qtbot.waitUntil(lambda: "removes 1." in dialog.summary.text(), timeout=5000)
    assert dialog.changes.item(0).text() == "− src/secret/key.py"
    assert [dialog.matched.item(i).text() for i in range(dialog.matched.count())] == [
        "src/app.py", "src/lib.py"]
    # An answer to an older text, arriving late, is not shown over the newest one.
    assert dialog.last_preview is not None
    dialog._on_preview(dialog._ticket - 1, {**dialog.last_preview, "count": 999})
    assert "999" not in dialog.summary.text()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: scope_of(project, "INT-1") == ("src/**", "!src/secret/**"),
                    timeout=5000)
    model = window.intents_pane.model
    qtbot.waitUntil(lambda: model.index(0, 4).data() == "src/**, !src/secret/**", timeout=5000)


def test_a_call_refused_at_scope_is_added_to_the_scope_and_the_next_try_passes(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    add_files(project)
    write_policy(project, {"auto_approve": {"edit": True}})
    window, _core = make_window(daemon.socket_path, project)
    with Client(daemon.socket_path, timeout=10) as agent:
        session = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(project)})["session_id"]
        agent.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
        write = {"session_id": session, "tool": "write_to_file",
                 "args": {"path": "docs/new.md", "content": "n"}}
        assert agent.call(protocol.TOOLS_CALL, write)["stage"] == "scope"
        dialog = offer_from_the_last_refusal(window, qtbot)
        assert [b.text().split()[0] for b in dialog.choices.buttons()] == ["docs/new.md",
                                                                           "docs/**"]
        assert dialog.text.toPlainText() == "src/**\ndocs/new.md"
        # docs/new.md does not exist yet: no file is added, but the path is owned now.
        assert "adds 0 and removes 0. docs/new.md is in the scope" in dialog.summary.text()
        dialog.choices.button(1).click()  # the folder: it also owns docs/guide.md
        qtbot.waitUntil(lambda: dialog.text.toPlainText() == "src/**\ndocs/**")
        qtbot.waitUntil(lambda: "adds 1 and removes 0" in dialog.summary.text(), timeout=5000)
        assert dialog.changes.item(0).text() == "+ docs/guide.md"
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        # The answer comes once the daemon has reloaded the file: then the dialog closes.
        qtbot.waitUntil(lambda: window.intents_pane.dialog is None, timeout=5000)
        assert scope_of(project, "INT-1") == ("src/**", "docs/**")
        passed = agent.call(protocol.TOOLS_CALL, write)
        assert (passed["decision"], passed["approved_by"]) == ("allow", "auto"), passed["reason"]
    assert (project / "docs/new.md").read_text() == "n"


def test_a_new_intent_is_started_abandoned_completed_then_removed(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path, project)
    pane = window.intents_pane
    window.show_tab(INTENTS)
    qtbot.mouseClick(pane.edit_buttons["new"], Qt.MouseButton.LeftButton)
    dialog = pane.dialog
    assert isinstance(dialog, NewIntentDialog)
    qtbot.waitUntil(lambda: dialog.base_sha256 is not None, timeout=5000)
    qtbot.keyClicks(dialog.intent_id, "INT-1")
    qtbot.keyClicks(dialog.name, "Docs")
    dialog.status.setCurrentText("PENDING")
    dialog.scope.setPlainText("docs/**\n!docs/private/**")
    dialog.constraints.setPlainText("no new deps\n\nkeep the index")
    dialog.criteria.setPlainText("the guide builds")
    path = project / ".orchestration" / "active_intents.yaml"
    path.write_text(path.read_text().replace("name: intent INT-1", "name: renamed by hand"))
    dialog.save()  # based on the file as the form found it: refused, and the form reads it again
    qtbot.waitUntil(lambda: "changed on disk" in dialog.message.text(), timeout=5000)
    qtbot.waitUntil(lambda: dialog.base_sha256 == sha256_of(path), timeout=5000)
    dialog.save()
    qtbot.waitUntil(lambda: "duplicate intent id 'INT-1'" in dialog.message.text(), timeout=5000)
    dialog.intent_id.setText("DOCS")
    dialog.save()
    model = pane.model
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=5000)
    made = load_intents(project / ".orchestration" / "active_intents.yaml").get("DOCS")
    assert made is not None
    assert (made.name, made.status, made.owned_scope, made.constraints,
            made.acceptance_criteria) == ("Docs", "PENDING", ("docs/**", "!docs/private/**"),
                                          ("no new deps", "keep the index"),
                                          ("the guide builds",))
    assert "name: renamed by hand" in path.read_text()
    pane.table.selectRow(1)
    for button, status in (("start", "IN_PROGRESS"), ("abandon", "ABANDONED"),
                           ("complete", "COMPLETED")):
        qtbot.waitUntil(pane.edit_buttons[button].isEnabled, timeout=5000)
        qtbot.mouseClick(pane.edit_buttons[button], Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda status=status: model.index(1, 2).data() == status,  # type: ignore[misc]
                        timeout=5000)
        assert not pane.edit_buttons[button].isEnabled()
        assert status_of(project, "DOCS") == status
    qtbot.mouseClick(pane.edit_buttons["remove"], Qt.MouseButton.LeftButton)
    box = pane.dialog
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=5000)
    assert scope_of(project, "INT-1") == ("src/**",)


def test_a_scope_saved_over_a_hand_edit_is_refused_and_the_typed_scope_kept(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    add_files(project)
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(INTENTS)
    window.intents_pane.table.selectRow(0)
    window.intents_pane.edit_scope()
    dialog = open_editor(window, qtbot)
    dialog.text.setPlainText("src/**\ndocs/**")
    path = project / ".orchestration" / "active_intents.yaml"
    hand = path.read_text().replace("name: intent INT-1", "name: renamed by hand")
    path.write_text(hand)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "changed on disk" in dialog.message.text(), timeout=5000)
    assert path.read_text() == hand
    assert dialog.text.toPlainText() == "src/**\ndocs/**"
    # The next save is based on the file as it is now, and keeps the hand edit.
    qtbot.waitUntil(lambda: "Save again" in dialog.message.text(), timeout=5000)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.intents_pane.dialog is None, timeout=5000)
    assert scope_of(project, "INT-1") == ("src/**", "docs/**")
    assert "name: renamed by hand" in path.read_text()


def test_an_approval_outside_its_intent_is_added_to_the_scope_and_then_passes(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path, project)
    caller = agent(project, "--path", "src/x.py")
    pane = window.approvals_pane
    qtbot.waitUntil(lambda: pane.model.rowCount() == 1, timeout=10000)
    # While the call waits, the person narrows the scope by hand: its target is outside now.
    path = project / ".orchestration" / "active_intents.yaml"
    path.write_text(path.read_text().replace("- src/**", "- src/app.py"))
    intents = window.intents_pane.model
    qtbot.waitUntil(lambda: intents.index(0, 4).data() == "src/app.py", timeout=5000)
    pane.table.selectRow(0)
    action = window.approval_scope_action
    assert action.isEnabled()
    action.trigger()
    dialog = open_editor(window, qtbot)
    assert [b.text().split()[0] for b in dialog.choices.buttons()] == ["src/x.py", "src/**"]
    assert dialog.text.toPlainText() == "src/app.py\nsrc/x.py"
    assert "src/x.py is in the scope: the agent's next try passes" in dialog.summary.text()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.intents_pane.dialog is None, timeout=5000)
    assert scope_of(project, "INT-1") == ("src/app.py", "src/x.py")
    qtbot.waitUntil(pane.approve_button.isEnabled, timeout=5000)
    qtbot.mouseClick(pane.approve_button, Qt.MouseButton.LeftButton)
    [answer] = caller.wait(qtbot)
    assert (answer["decision"], answer["approved_by"]) == ("allow", "person"), answer
    assert (project / "src/x.py").exists()


def test_a_folder_refused_as_itself_is_offered_anchored_and_the_next_try_passes(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    add_files(project)
    write_policy(project, {"auto_approve": {"all_commands": True, "edit": True}})
    window, _core = make_window(daemon.socket_path, project)
    with Client(daemon.socket_path, timeout=30) as agent:
        session = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(project)})["session_id"]
        agent.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
        remove = {"session_id": session, "tool": "execute_command",
                  "args": {"command": "rm -rf src"}}
        refused = agent.call(protocol.TOOLS_CALL, remove, timeout=60)
        assert (refused["stage"], "not the folder src itself" in refused["reason"]) == (
            "scope", True)
        dialog = offer_from_the_last_refusal(window, qtbot)
        # `/src`, not `src`: a bare name would own every folder called src, lib/src as well.
        assert [b.text().split()[0] for b in dialog.choices.buttons()] == ["/src"]
        assert dialog.text.toPlainText() == "src/**\n/src"
        assert "adds 0 and removes 0. src is in the scope" in dialog.summary.text()
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.intents_pane.dialog is None, timeout=5000)
        assert scope_of(project, "INT-1") == ("src/**", "/src")
        passed = agent.call(protocol.TOOLS_CALL, remove, timeout=60)
        assert (passed["decision"], passed["stage"]) == ("allow", "approval"), passed["reason"]
        elsewhere = agent.call(protocol.TOOLS_CALL, {
            "session_id": session, "tool": "write_to_file",
            "args": {"path": "lib/src/new.py", "content": "n"}})
        assert (elsewhere["decision"], elsewhere["stage"]) == ("deny", "scope")
