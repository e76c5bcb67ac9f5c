"""`intentd status` against a real daemon: sessions under their own workspace, namesakes told
apart, and folders that are gone left out."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.server.helpers import open_session


def status(daemon: DaemonProcess) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "status", "--socket",
                          str(daemon.socket_path)], capture_output=True, text=True, timeout=30,
                         check=True)
    return out.stdout.splitlines()


def test_sessions_sit_under_their_workspace_and_namesakes_are_told_apart(
        daemon: DaemonProcess, connect: Callable[[str], Client], tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work" / "app").resolve()
    play = make_workspace(tmp_path / "play" / "app").resolve()
    gone = make_workspace(tmp_path / "gone").resolve()
    agent = connect("agent")
    in_work = open_session(agent, work, select=False)
    in_play = [open_session(agent, play, select=False) for _ in range(2)]
    open_session(agent, gone, select=False)
    shutil.rmtree(gone)
    lines = status(daemon)
    work_at = lines.index(f"- work/app  {work}: 1 session(s), 0 pending")
    play_at = lines.index(f"- play/app  {play}: 2 session(s), 0 pending")
    assert lines[work_at + 1].startswith(f"    session {in_work} ")
    assert [line.split()[1] for line in lines[play_at + 1:play_at + 3]] == in_play
    assert not any(str(gone) in line for line in lines), "a deleted folder is no workspace"
    listed = agent.call(protocol.WORKSPACES_LIST)["workspaces"]
    assert {ws["workspace"] for ws in listed} == {str(work), str(play)}


def test_workspace_labels_add_parents_only_where_names_clash() -> None:
    assert protocol.workspace_labels(["/p/client/app", "/p/own/app", "/p/lib", "/a/x/y", "/b/x/y"]) == {
        "/p/client/app": "client/app", "/p/own/app": "own/app", "/p/lib": "lib",
        "/a/x/y": "a/x/y", "/b/x/y": "b/x/y"}
