"""Grants, batch answers and the hand-off to an agent's own prompt: the app on a real daemon."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from intentd.gui.app_core import AppCore
from intentd.gui.views.approvals import remember_choices
from intentd.gui.views.main_window import MainWindow
from tests.gui.conftest import Agent
from tests.server.helpers import Background, open_session

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def rows(window: MainWindow) -> int:
    return window.approvals_pane.model.rowCount()


def wait_answerable(window: MainWindow, qtbot: QtBot) -> None:
    qtbot.waitUntil(window.approvals_pane.approve_button.isEnabled)


def test_approve_the_rest_of_a_turn_answers_every_call_of_it(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    caller = agent(project, "--count", "3", "--batch", "turn-1")
    qtbot.waitUntil(lambda: rows(window) == 3, timeout=10000)
    pane = window.approvals_pane
    wait_answerable(window, qtbot)
    assert pane.approve_turn.isEnabled()
    assert pane._fact_labels["Turn"].text() == "turn-1", "the person sees which turn"
    pane.approve_turn.click()
    answers = caller.wait(qtbot)
    assert [a["decision"] for a in answers] == ["allow"] * 3
    assert all(a["approved_by"] == "person" for a in answers)
    qtbot.waitUntil(lambda: rows(window) == 0)


def test_the_rest_of_a_turn_is_what_the_person_was_shown(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    """A call the agent adds to the turn just before the click, not yet in the table, is not
    approved with it: it waits, and the person sees it next."""
    window, _core = make_window(daemon.socket_path)
    with contextlib.ExitStack() as clients:
        def connected() -> Client:
            client = clients.enter_context(Client(daemon.socket_path))
            client.initialize("agent")
            return client

        look = connected()
        session_id = open_session(connected(), project)

        def queue(path: str) -> Background:  # a connection each: a Client is one caller's
            return Background(connected(), protocol.TOOLS_CALL, {
                "session_id": session_id, "tool": "write_to_file", "batch": "turn-1",
                "args": {"path": path, "content": "x\n"}})

        shown = [queue("src/a.py"), queue("src/b.py")]
        qtbot.waitUntil(lambda: rows(window) == 2, timeout=10000)
        wait_answerable(window, qtbot)
        late = queue("src/late.py")  # Qt runs no event until the click: the table has two
        deadline = time.monotonic() + 10
        while len(look.call(protocol.APPROVALS_LIST)["approvals"]) < 3:
            assert time.monotonic() < deadline, "the third call never waited"
            time.sleep(0.02)
        window.approvals_pane.approve_turn.click()
        qtbot.waitUntil(lambda: not any(call.thread.is_alive() for call in shown), timeout=10000)
        assert [call.result()["decision"] for call in shown] == ["allow", "allow"]
        waiting = look.call(protocol.APPROVALS_LIST)["approvals"]
        assert [a["args"]["path"] for a in waiting] == ["src/late.py"]
        qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)
        look.call(protocol.APPROVALS_RESPOND, {"approval_id": waiting[0]["id"],
                                               "decision": "reject"})
        assert late.result()["decision"] == "deny"
    assert not (project / "src" / "late.py").exists()


def test_several_selected_requests_are_answered_together(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    caller = agent(project, "--count", "2")
    qtbot.waitUntil(lambda: rows(window) == 2, timeout=10000)
    pane = window.approvals_pane
    assert not pane.approve_turn.isEnabled(), "no turn: the calls came without a batch"
    pane.table.selectAll()
    wait_answerable(window, qtbot)
    assert pane.reject_selected.isEnabled() and len(pane.selected_ids()) == 2
    pane.feedback.setText("not these")
    pane.reject_selected.click()
    answers = caller.wait(qtbot)
    assert [a["decision"] for a in answers] == ["deny"] * 2
    assert all("not these" in a["reason"] for a in answers)


def test_a_grant_made_in_the_app_answers_the_next_call_and_is_revoked_in_settings(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    first = agent(project, "--path", "src/x.py")
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)
    pane = window.approvals_pane
    wait_answerable(window, qtbot)
    approval = pane.current()
    assert approval is not None
    labels = [label for label, _ in remember_choices(approval)]
    assert labels[-1] == "…for write_to_file on src/**, this workspace, until revoked"
    pane.remember.menu().aboutToShow.emit()
    pane.remember.menu().actions()[-1].trigger()
    assert first.wait(qtbot)[0]["decision"] == "allow"
    qtbot.waitUntil(lambda: "Won't ask again: write_to_file on src/**" in pane.note.text())
    panel = window.settings_pane.grants
    window.settings_pane.set_workspace(str(project))
    qtbot.waitUntil(lambda: len(panel.buttons) == 1, timeout=10000)
    [(grant_id, buttons)] = panel.buttons.items()
    assert not buttons["copy"].isEnabled(), "a path grant has no policy rule of its shape"
    second = agent(project, "--path", "src/y.py")
    [answer] = second.wait(qtbot)
    assert answer["decision"] == "allow" and answer["approved_by"] == f"grant {grant_id}"
    assert rows(window) == 0, "nobody was asked"
    buttons["revoke"].click()
    with Client(daemon.socket_path) as client:
        qtbot.waitUntil(lambda: client.call(protocol.GRANTS_LIST, {})["grants"] == [])
    qtbot.waitUntil(lambda: not panel.buttons)
    third = agent(project, "--path", "src/z.py")
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)  # asked again at once
    third.process.kill()


def test_settings_says_where_a_command_grant_came_from_and_copies_it_as_a_policy_rule(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, _core = make_window(daemon.socket_path)
    agent = Client(daemon.socket_path, timeout=30).connect()
    agent.initialize("gui-test-agent")
    session_id = open_session(agent, project)
    call = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id,
                                                   "tool": "execute_command",
                                                   "args": {"command": "touch src/made"}})
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)
    pane = window.approvals_pane
    wait_answerable(window, qtbot)
    approval = pane.current()
    assert approval is not None
    pane.remember.menu().aboutToShow.emit()
    pane.remember.menu().actions()[-1].trigger()  # this workspace, until revoked
    qtbot.waitUntil(lambda: not call.thread.is_alive(), timeout=10000)  # the app answers
    assert call.result()["decision"] == "allow"
    panel = window.settings_pane.grants
    window.settings_pane.set_workspace(str(project))
    qtbot.waitUntil(lambda: len(panel.buttons) == 1, timeout=10000)
    [buttons] = panel.buttons.values()
    row = buttons["copy"].parentWidget()
    assert row is not None
    said = " ".join(label.text() for label in row.findChildren(QLabel))
    assert "`touch` (and its arguments), this workspace" in said
    assert f"from approving execute_command ({approval.id}) of agent, in intentd-gui" in said
    QGuiApplication.clipboard().clear()
    assert buttons["copy"].isEnabled()
    buttons["copy"].click()
    assert QGuiApplication.clipboard().text() == "commands:\n  allow:\n    - 'touch'\n    - 'touch *'\n"
    assert "Copied" in panel.status.text()
    agent.close()


def approved_with_a_grant_from_the_terminal(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> tuple[MainWindow, Agent, dict[str, Any]]:
    """The app open, an agent's write waiting, and the terminal approving it with a grant on
    src/**, which waits in Settings for a person: (the window, the agent, the answer)."""
    window, _core = make_window(daemon.socket_path)
    caller = agent(project, "--path", "src/x.py")
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)
    approval = window.approvals_pane.current()
    assert approval is not None
    with Client(daemon.socket_path) as terminal:
        terminal.initialize("intentd-cli")
        answer: dict[str, Any] = terminal.call(protocol.APPROVALS_RESPOND, {
            "approval_id": approval.id, "decision": "approve",
            "grant": {"lifetime": "workspace", "shape": "path", "pattern": "src/**"}})
    return window, caller, answer


def test_a_grant_asked_for_in_the_terminal_is_confirmed_in_settings(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, caller, answer = approved_with_a_grant_from_the_terminal(
        daemon, project, agent, make_window, qtbot)
    assert "queued" in answer["grant"]
    caller.wait(qtbot)
    panel = window.settings_pane.grants
    window.settings_pane.set_workspace(str(project))
    qtbot.waitUntil(lambda: "allow" in next(iter(panel.buttons.values()), {}), timeout=10000)
    next(iter(panel.buttons.values()))["allow"].click()
    qtbot.waitUntil(lambda: "revoke" in next(iter(panel.buttons.values()), {}), timeout=10000)


def test_a_grant_asked_for_in_the_terminal_can_be_refused_in_settings(
        daemon: DaemonProcess, project: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, caller, _answer = approved_with_a_grant_from_the_terminal(
        daemon, project, agent, make_window, qtbot)
    assert caller.wait(qtbot)[0]["decision"] == "allow", "the call itself was approved"
    panel = window.settings_pane.grants
    window.settings_pane.set_workspace(str(project))
    qtbot.waitUntil(lambda: "refuse" in next(iter(panel.buttons.values()), {}), timeout=10000)
    next(iter(panel.buttons.values()))["refuse"].click()
    qtbot.waitUntil(lambda: not panel.buttons, timeout=10000)
    with Client(daemon.socket_path) as person:
        listing = person.call(protocol.GRANTS_LIST, {})
    assert listing["grants"] == [] and listing["requests"] == []
    again = agent(project, "--path", "src/y.py")
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)  # asked: nothing was granted
    again.process.kill()


def test_the_app_is_an_approver_and_when_it_goes_the_agents_prompt_asks(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, core = make_window(daemon.socket_path)
    pane = window.approvals_pane
    qtbot.waitUntil(lambda: pane.approvers.text().startswith("Approvers connected: 1"))
    hook = Client(daemon.socket_path, timeout=30).connect()
    hook.initialize("intentd-hook-claude-code")
    session_id = hook.call(protocol.SESSIONS_OPEN, {"workspace": str(project)})["session_id"]
    hook.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    waiting = Background(hook, protocol.TOOLS_AUTHORIZE, {
        "session_id": session_id, "tool": "write_to_file", "native_prompt": True,
        "args": {"path": "src/n.py", "content": "n\n"}})
    qtbot.waitUntil(lambda: rows(window) == 1, timeout=10000)  # with the app open, it asks here
    core.connection.close()  # the person closes the app
    answer = waiting.result()
    assert answer["decision"] == "ask" and "agent's own prompt" in answer["reason"]
    assert "Not connected" in pane.approvers.text()
    hook.close()
