"""Never blind, in the app: a daemon short of inotify watches says so in the Checkpoints tab, the
status bar and the Activity row of a call whose checkpoint scanned, and shows its warm-up.

The daemon runs in a user namespace (`unshare -U -r`) whose per-user watch limit is lowered
through /proc/sys/user/max_inotify_watches; the system-wide value is untouched. The app connects
from outside the namespace, over the same socket a person's app would use.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace, write_policy
from intentd.gui.app_core import AppCore
from intentd.gui.views.main_window import ACTIVITY, CHECKPOINTS, MainWindow
from tests.gui.conftest import Agent

MakeWindow = Callable[..., tuple[MainWindow, AppCore]]
FOLDERS, FILES_EACH = 60, 70  # 4,200 files: the warm-up reports progress at 2,000 and 4,000
WATCHES = 25

# Lower the namespace's watch limit, then become the daemon ($0: python, $1: socket, $2: limit).
LOWERED = 'echo "$2" > /proc/sys/user/max_inotify_watches && exec "$0" -m intentd.daemon.cli ' \
          'serve --socket "$1"'


class LimitedDaemon(DaemonProcess):
    """`intentd serve` in a user namespace that allows it only `watches` inotify watches."""

    def __init__(self, socket_path: Path, state_dir: Path, watches: int) -> None:
        super().__init__(socket_path, state_dir)
        self.watches = watches

    def start(self, timeout: float = 20.0) -> LimitedDaemon:
        env = {**os.environ, "XDG_STATE_HOME": str(self.state_dir)}
        self.process = subprocess.Popen(
            ["unshare", "-U", "-r", "sh", "-c", LOWERED, sys.executable, str(self.socket_path),
             str(self.watches)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while not self.answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"the daemon exited: {self.process.communicate()[1]!r}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError("the daemon did not start in time")
            time.sleep(0.02)
        return self


def require_user_namespaces() -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1)")
    probe = subprocess.run(["unshare", "-U", "-r", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"user namespaces are not available: {probe.stderr.decode().strip()}")


@pytest.fixture
def daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    require_user_namespaces()
    with LimitedDaemon(short_dir / "d.sock", short_dir / "state", WATCHES) as process:
        yield process


@pytest.fixture
def many_folders(short_dir: Path) -> Path:
    files = {f"d{i:02d}/f{j:02d}.txt": f"{i} {j}\n"
             for i in range(FOLDERS) for j in range(FILES_EACH)}
    # Every folder in scope: a command may make folders inside one the watcher watches.
    root = make_workspace(short_dir / "proj", make_intent(owned_scope=["**"]),
                          files={"src/app.py": "print('hi')\n", **files})
    write_policy(root, {"auto_approve": {"all_commands": True}})
    return root.resolve()


def listed_coverage(daemon: DaemonProcess, workspace: Path) -> dict[str, object]:
    with Client(daemon.socket_path, timeout=20) as person:
        coverage: dict[str, object] = person.call(
            protocol.CHECKPOINTS_LIST, {"workspace": str(workspace)})["coverage"]
    return coverage


def test_unwatched_folders_are_said_in_the_tab_the_status_bar_and_the_activity_row(
        daemon: DaemonProcess, many_folders: Path, agent: Callable[..., Agent],
        make_window: MakeWindow, qtbot: QtBot) -> None:
    window, core = make_window(daemon.socket_path, many_folders, wait=False)
    window.show_tab(CHECKPOINTS)
    pane = window.checkpoints_pane
    progress: list[tuple[bool, str]] = []  # (bar shown, its text) at each warm-up step
    core.sync.coverage.warm_up_changed.connect(lambda _path: progress.append(
        (not pane.coverage.warm_up.isHidden(), pane.coverage.warm_up.text())))
    with qtbot.waitSignal(core.sync.loaded, timeout=10000):
        core.connection.open()

    # the warm-up's progress was shown while it ran, then the bar went away
    qtbot.waitUntil(lambda: bool(progress) and not progress[-1][0], timeout=20000)
    midway = "Reading the workspace for its first checkpoint: 2,000 of "
    assert any(shown and text.startswith(midway) for shown, text in progress), progress
    assert pane.coverage.warm_up.isHidden()

    # the Checkpoints tab: how many folders are not watched, that they are scanned, the fix
    coverage = listed_coverage(daemon, many_folders)
    unwatched = coverage["unwatched_count"]
    assert coverage["mode"] == "partial" and isinstance(unwatched, int) and unwatched > 0
    line = pane.coverage.label
    qtbot.waitUntil(lambda: f"cannot watch {unwatched:,} of" in line.text(), timeout=10000)
    assert line.isVisible()
    assert "scanned at every command checkpoint" in line.text()
    assert "fs.inotify.max_user_watches" in line.text()

    # the status bar, whatever tab is shown
    window.show_tab(ACTIVITY)
    status = window.coverage_status
    assert status.isVisible()
    assert f"Checkpoints: scanning {unwatched:,} unwatched folders" in status.text()
    assert "watch limit" in status.toolTip()

    # a call whose checkpoint scanned the unwatched folders says so in its Activity row
    caller = agent(many_folders, "--path", "src/app.py", "--content", "print('bye')\n")
    qtbot.waitUntil(lambda: len(core.approvals) == 1, timeout=10000)
    core.commands.approve(core.approvals.approvals()[0].id)
    caller.wait(qtbot)
    model = window.activity_pane.model

    def written_row() -> str:
        for row in range(model.rowCount()):
            entry = model.entry_at(row)
            if entry is not None and entry.tool == "write_to_file":
                return str(model.index(row, 6).data())
        return ""

    qtbot.waitUntil(lambda: "unwatched folder" in written_row(), timeout=10000)
    assert "checkpoint by the watcher and a scan of" in written_row()
    assert "watch limit" in written_row()

    # a command that makes folders past the limit: the status bar counts them as soon as it
    # ends, not at the next call (the list loaded for the command's checkpoint predates them)
    coverage = listed_coverage(daemon, many_folders)
    before, listed = coverage["unwatched_count"], coverage["unwatched"]
    assert isinstance(before, int) and isinstance(listed, list)
    # the unwatched folders are listed sorted: one of ours before the last listed is watched
    watched = next(f"d{i:02d}" for i in range(FOLDERS)
                   if f"d{i:02d}" not in listed and f"d{i:02d}" < listed[-1])
    with Client(daemon.socket_path, timeout=60) as client:
        client.initialize("coverage-test")
        sid = client.call(protocol.SESSIONS_OPEN, {"workspace": str(many_folders)})["session_id"]
        client.call(protocol.TOOLS_CALL, {"session_id": sid, "tool": "select_active_intent",
                                          "args": {"intent_id": "INT-1"}})
        client.send(protocol.request(protocol.TOOLS_CALL, {
            "session_id": sid, "tool": "execute_command",
            "args": {"command": "until [ -e go ]; do sleep 0.05; done; mkdir n1 n2 n3 n4 n5",
                     "cwd": watched}}, 7))
        qtbot.waitUntil(lambda: "execute_command" in checkpoint_labels(window), timeout=10000)
        assert status.text().endswith(f"scanning {before:,} unwatched folders")
        (many_folders / watched / "go").write_text("")  # the command goes on
        done = client.read_message(30)
        assert done.get("id") == 7 and done["result"]["result"]["ok"], done
    after = listed_coverage(daemon, many_folders)["unwatched_count"]
    assert after == before + 5
    qtbot.waitUntil(lambda: status.text().endswith(f"scanning {after:,} unwatched folders"),
                    timeout=10000)


def checkpoint_labels(window: MainWindow) -> str:
    model = window.checkpoints_pane.model
    return " ".join(str(model.index(row, 2).data()) for row in range(model.rowCount()))


def test_a_workspace_it_cannot_watch_at_all_is_scanned_whole_and_said_so(
        short_dir: Path, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    require_user_namespaces()
    # The daemon's watch of its config files takes both: none is left for the workspace itself.
    with LimitedDaemon(short_dir / "d2.sock", short_dir / "state2", 2) as daemon:
        window, _core = make_window(daemon.socket_path, project)
        window.show_tab(CHECKPOINTS)
        assert listed_coverage(daemon, project)["mode"] == "scanning"
        line = window.checkpoints_pane.coverage.label
        qtbot.waitUntil(lambda: "not running" in line.text(), timeout=10000)
        assert "every command checkpoint scans the whole workspace" in line.text()
        assert window.coverage_status.isVisible()
        assert "Checkpoints: scanning all of proj (no file watcher)" in window.coverage_status.text()


def test_a_fully_watched_workspace_says_so_and_leaves_the_status_bar_alone(
        short_dir: Path, project: Path, make_window: MakeWindow, qtbot: QtBot) -> None:
    with DaemonProcess(short_dir / "d3.sock", short_dir / "state3") as daemon:
        window, _core = make_window(daemon.socket_path, project)
        window.show_tab(CHECKPOINTS)
        line = window.checkpoints_pane.coverage.label
        qtbot.waitUntil(lambda: "sees all" in line.text(), timeout=10000)
        assert listed_coverage(daemon, project)["mode"] == "watched"
        assert not window.coverage_status.isVisible() and window.coverage_status.text() == ""
