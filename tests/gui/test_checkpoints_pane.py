"""The checkpoints pane keeps the person's choice, and diffs only what is on screen, sparingly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.gui.app_core import AppCore
from intentd.gui.views.checkpoints import CheckpointsPane
from intentd.gui.views.main_window import APPROVALS, CHECKPOINTS, MainWindow
from tests.gui.conftest import FAKE_WORKSPACE
from tests.gui.factories import ledger_json
from tests.gui.fake_daemon import FakeDaemon, caught_up

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def checkpoint_json(n: int) -> dict[str, Any]:
    return {"id": f"cp-{n}", "created_at": float(n), "label": f"write_to_file src/f{n}.py",
            "kind": "files", "files": [f"src/f{n}.py"]}


@pytest.fixture
def fake(fake_daemon: FakeDaemon) -> FakeDaemon:
    """Two checkpoints; each diffs against now as one changed line naming it."""
    checkpoints = [checkpoint_json(2), checkpoint_json(1)]
    fake_daemon.handlers[protocol.CHECKPOINTS_LIST] = lambda p: {"checkpoints": checkpoints}
    fake_daemon.handlers[protocol.CHECKPOINTS_DIFF] = lambda p: {"diffs": [{
        "path": "src/f.py", "status": "modified",
        "unified": f"--- a/src/f.py\n+++ b/src/f.py\n@@ -1 +1 @@\n-{p['checkpoint_id']}\n+now\n"}]}
    return fake_daemon


def diffed(fake: FakeDaemon, core: AppCore, qtbot: QtBot) -> list[str]:
    caught_up(qtbot, core.connection)
    return [p["checkpoint_id"] for p in fake.params_of(protocol.CHECKPOINTS_DIFF)]


def shows_diff_of(pane: CheckpointsPane, checkpoint_id: str) -> bool:
    return f"-{checkpoint_id}\n" in pane.diff.unified.toPlainText() + "\n"


def selected(pane: CheckpointsPane) -> str | None:
    checkpoint = pane.current()
    return checkpoint.id if checkpoint else None


def test_a_new_checkpoint_leaves_the_chosen_one_selected(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot) -> None:
    window, core = make_window(fake.path)
    pane = window.checkpoints_pane
    window.show_tab(CHECKPOINTS)
    assert selected(pane) == "cp-2"  # the newest, at first
    pane.table.selectRow(1)
    qtbot.waitUntil(lambda: shows_diff_of(pane, "cp-1"))
    fake.handlers[protocol.CHECKPOINTS_LIST] = lambda p: {"checkpoints": [
        checkpoint_json(n) for n in (3, 2, 1)]}
    fake.notify(protocol.CHECKPOINTS_CREATED, {"workspace": FAKE_WORKSPACE,
                                               "checkpoint_id": "cp-3", "label": "x"})
    qtbot.waitUntil(lambda: pane.model.rowCount() == 3)
    assert selected(pane) == "cp-1"  # Restore… still restores the one the person chose
    assert pane.restore_button.isEnabled()


def test_diffs_are_asked_for_only_on_screen_and_at_most_once_per_burst(
        fake: FakeDaemon, make_window: MakeWindow, qtbot: QtBot,
        monkeypatch: pytest.MonkeyPatch) -> None:
    window, core = make_window(fake.path)
    pane = window.checkpoints_pane
    assert pane.model.rowCount() == 2 and diffed(fake, core, qtbot) == []  # not on screen
    window.show_tab(CHECKPOINTS)
    qtbot.waitUntil(lambda: shows_diff_of(pane, "cp-2"))
    assert diffed(fake, core, qtbot) == ["cp-2"]
    drawn: list[str | None] = []
    real_set_diff = pane.diff.set_diff

    def set_diff(text: str | None, *args: Any) -> None:
        drawn.append(text)
        real_set_diff(text, *args)

    monkeypatch.setattr(pane.diff, "set_diff", set_diff)
    for _ in range(5):  # calls that ran: "now" moved, so the diff is asked for again, once
        fake.notify(protocol.TOOLS_FINISHED, ledger_json(FAKE_WORKSPACE, tool="write_to_file"))
    qtbot.waitUntil(lambda: len(diffed(fake, core, qtbot)) == 2)
    assert diffed(fake, core, qtbot) == ["cp-2", "cp-2"]
    assert drawn == []  # the same diff again: not parsed and laid out again
    window.show_tab(APPROVALS)
    fake.notify(protocol.TOOLS_FINISHED, ledger_json(FAKE_WORKSPACE, tool="write_to_file"))
    fake.notify(protocol.CHECKPOINTS_CREATED, {"workspace": FAKE_WORKSPACE,
                                               "checkpoint_id": "cp-2", "label": "x"})
    qtbot.waitUntil(lambda: len(core.activity) == 7)
    assert diffed(fake, core, qtbot) == ["cp-2", "cp-2"]  # hidden: nothing asked
    window.show_tab(CHECKPOINTS)
    qtbot.waitUntil(lambda: len(diffed(fake, core, qtbot)) == 3)
