"""The Activity tab pages back through a large ledger, against a real daemon."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from intentd.daemon.engine.ledger import Ledger
from intentd.daemon.testing import DaemonProcess
from intentd.daemon.utils.statedir import workspace_state_dir
from intentd.gui.app_core import AppCore
from intentd.gui.sync import LEDGER_LIMIT
from intentd.gui.views.main_window import ACTIVITY, MainWindow

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]
CALLS = 1200


def past_entry(workspace: Path, n: int) -> dict[str, Any]:
    when = datetime.fromtimestamp(1_767_225_600 + n, UTC).isoformat(timespec="milliseconds")
    return {"v": 1, "intent": {"id": f"c-{n}", "time": when, "session": f"s-{n % 3}",
                               "agent": "test", "mode": "act", "workspace": str(workspace),
                               "intent_id": "INT-1", "tool": "read_file",
                               "args": {"path": f"src/f{n}.py"}},
            "decision": "allow", "stage": "approval", "reason": f"call {n}",
            "approved_by": "auto", "receipt": {"result": "success", "data": {}}}


def test_older_entries_load_a_page_at_a_time_until_the_first(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    ledger = Ledger(workspace_state_dir(project, daemon.state_dir / "intentd") / "ledger.jsonl")
    for n in range(CALLS):
        ledger.append(past_entry(project, n))
    ledger.close()
    window, core = make_window(daemon.socket_path, project)
    window.show_tab(ACTIVITY)
    pane = window.activity_pane
    reasons = lambda: [e.reason for e in core.activity.entries()]  # noqa: E731
    assert reasons() == [f"call {n}" for n in range(CALLS - LEDGER_LIMIT, CALLS)]
    assert pane.older.isEnabled()
    qtbot.mouseClick(pane.older, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(reasons()) == 2 * LEDGER_LIMIT, timeout=10000)
    assert pane.older.isEnabled()
    qtbot.mouseClick(pane.older, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(reasons()) == CALLS, timeout=10000)
    assert reasons() == [f"call {n}" for n in range(CALLS)], "every entry once, oldest first"
    assert pane.proxy.rowCount() == CALLS
    assert not pane.older.isEnabled(), "nothing older than the first entry"
    assert pane.proxy.index(0, 6).data() == "call 0"
