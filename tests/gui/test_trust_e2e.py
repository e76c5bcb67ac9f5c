"""The app and trust: widening a script asked for is the person's to allow; planted sockets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, write_policy
from intentd.gui.app_core import AppCore
from intentd.gui.connection import ConnectionState, DaemonConnection
from intentd.gui.views.main_window import SETTINGS, MainWindow
from tests.trust.spoof import plant, scenarios

SCENARIOS = scenarios(Path("/"))

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]


def edits_in_force(client: Client, project: Path) -> bool:
    settings = client.call(protocol.SETTINGS_GET, {"workspace": str(project)})
    return bool(settings["policy"]["auto_approve"]["edit"])


@pytest.mark.parametrize("allow", [True, False])
def test_a_scripts_widening_waits_for_the_person_in_the_app(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot,
        allow: bool) -> None:
    window, _core = make_window(daemon.socket_path, project)
    window.show_tab(SETTINGS)
    panel = window.settings_pane.requests
    with Client(daemon.socket_path, timeout=10) as script:
        script.initialize("a script")
        queued = script.call(protocol.SETTINGS_UPDATE, {"workspace": str(project),
                                                        "auto_approve": {"edit": True}})["queued"]
        assert not edits_in_force(script, project)
        qtbot.waitUntil(lambda: queued["id"] in panel.rows, timeout=5000)
        assert panel.isVisible()
        allow_button, refuse_button = panel.rows[queued["id"]]
        (allow_button if allow else refuse_button).click()
        qtbot.waitUntil(lambda: not panel.rows, timeout=5000)
        assert edits_in_force(script, project) is allow
    assert window.settings_pane.switches["edit"].isChecked() is allow


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_app_never_talks_to_a_planted_socket(short_dir: Path, qtbot: QtBot,
                                                 scenario: str) -> None:
    spoof = plant(short_dir / "run", **SCENARIOS[scenario])  # type: ignore[arg-type]
    try:
        connection = DaemonConnection(spoof.socket_path, "intentd-gui test")
        connection.open()
        qtbot.waitUntil(lambda: "refusing to talk to" in connection.last_error, timeout=5000)
        qtbot.wait(300)
        assert connection.state != ConnectionState.CONNECTED
        connection.close()
        assert spoof.bytes_received() == 0
    finally:
        spoof.stop()


def test_the_app_shows_a_refused_person_method_in_activity(
        daemon: DaemonProcess, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    from tests.trust.agent_side import probe_command, session

    write_policy(project, {"auto_approve": {"all_commands": True}})
    _window, core = make_window(daemon.socket_path, project)
    with Client(daemon.socket_path, timeout=60) as client:
        sid = session(client, project)
        done = client.call(protocol.TOOLS_CALL, {  # in src/: the intent's owned_scope
            "session_id": sid, "tool": "execute_command",
            "args": {"command": probe_command(daemon.socket_path, project), "cwd": "src"},
            "approval_timeout": 5})
        assert done["approved_by"] == "auto", done["reason"]

    def refused() -> list[str]:
        return [e.tool for e in core.activity.entries() if e.stage == "trust"]

    qtbot.waitUntil(lambda: protocol.SETTINGS_UPDATE in refused(), timeout=10000)
    assert all(e.decision == "deny" for e in core.activity.entries() if e.stage == "trust")
