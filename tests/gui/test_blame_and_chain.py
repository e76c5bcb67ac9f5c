"""The app shows whether the ledger's chain holds, and a checkpoint's files line by line by intent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, write_policy
from intentd.daemon.utils.statedir import workspace_state_dir
from intentd.gui.app_core import AppCore
from intentd.gui.views.main_window import ACTIVITY, APPROVALS, CHECKPOINTS, MainWindow

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def agent_writes(daemon: DaemonProcess, project: Path) -> None:
    with Client(daemon.socket_path, timeout=20) as agent:
        agent.initialize("agent")
        session = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(project),
                                                      "agent": "claude-code"})["session_id"]
        agent.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
        for tool, args in (("read_file", {"path": "src/app.py"}),
                           ("write_to_file", {"path": "src/app.py", "content": "a\nb\nc\n"})):
            done = agent.call(protocol.TOOLS_CALL, {"session_id": session, "tool": tool,
                                                    "args": args})
            assert done["decision"] == "allow", done


def test_activity_shows_whether_the_chain_holds(daemon: DaemonProcess, project: Path,
                                                make_window: MakeWindow, qtbot: QtBot) -> None:
    write_policy(project, {"auto_approve": {"edit": True}})
    agent_writes(daemon, project)
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(ACTIVITY)
    chain = window.activity_pane.chain
    assert chain is not None
    qtbot.waitUntil(lambda: "holds" in chain.label.text(), timeout=10000)
    ledger = workspace_state_dir(project, daemon.state_dir / "intentd") / "ledger.jsonl"
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join([lines[0].replace(b"\"allow\"", b"\"deny\""), *lines[1:]]))
    qtbot.mouseClick(chain.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "BROKEN" in chain.label.text(), timeout=10000)
    assert "ledger.jsonl:1 was changed" in chain.label.text()


def test_a_checkpoints_file_opens_line_by_line_by_intent(daemon: DaemonProcess, project: Path,
                                                         make_window: MakeWindow,
                                                         qtbot: QtBot) -> None:
    write_policy(project, {"auto_approve": {"edit": True}})
    agent_writes(daemon, project)
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(CHECKPOINTS)
    pane = window.checkpoints_pane
    qtbot.waitUntil(lambda: pane.model.rowCount() > 0, timeout=10000)
    rows = [r for r in range(pane.model.rowCount())
            if "src/app.py" in pane.model.checkpoint_at(r).files]  # type: ignore[union-attr]
    pane.table.setCurrentIndex(pane.model.index(rows[0], 0))
    window.show_blame()
    view = window.blame_view
    assert view is not None
    view.files.setCurrentText("src/app.py")  # a checkpoint of several files: choose one
    qtbot.waitUntil(lambda: view.model.rowCount() == 3, timeout=10000)
    model = view.model
    assert [model.index(row, 4).data() for row in range(3)] == ["a", "b", "c"]
    assert {model.index(row, 1).data() for row in range(3)} == {"INT-1 intent INT-1"}
    (project / "src" / "app.py").write_text("a\nby hand\nc\n")
    view.load("src/app.py")
    qtbot.waitUntil(lambda: model.index(1, 4).data() == "by hand", timeout=10000)
    assert [model.index(row, 1).data() for row in range(3)] == [
        "INT-1 intent INT-1", "-", "INT-1 intent INT-1"]
    view.close()


def test_an_edit_waiting_for_approval_opens_its_file_by_intent(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    write_policy(project, {"auto_approve": {"edit": True}})
    agent_writes(daemon, project)
    write_policy(project, {"auto_approve": {"edit": False}})  # the next edit waits for a person
    window, core = make_window(daemon.socket_path, project)
    with Client(daemon.socket_path, timeout=30) as agent:
        agent.initialize("agent")
        session = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(project),
                                                      "agent": "codex"})["session_id"]
        agent.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
        qtbot.waitUntil(lambda: not agent.call(protocol.SETTINGS_GET, {"workspace": str(project)})[
            "policy"]["auto_approve"]["edit"], timeout=10000)  # the policy file was reloaded
        agent.call(protocol.TOOLS_CALL, {"session_id": session, "tool": "read_file",
                                         "args": {"path": "src/app.py"}})
        agent.send(protocol.request(protocol.TOOLS_CALL, {
            "session_id": session, "tool": "replace_in_file",
            "args": {"path": "src/app.py", "old_str": "b\n", "new_str": "B\n"}}, id=99))
        qtbot.waitUntil(lambda: len(core.approvals) == 1, timeout=10000)
        window.show_tab(APPROVALS)
        qtbot.waitUntil(lambda: window.approvals_pane.current() is not None, timeout=10000)
        window.show_blame()
        view = window.blame_view
        assert view is not None and view.files.currentText() == "src/app.py"
        qtbot.waitUntil(lambda: view.model.rowCount() == 3, timeout=10000)
        assert {view.model.index(row, 1).data() for row in range(3)} == {"INT-1 intent INT-1"}
        view.close()
