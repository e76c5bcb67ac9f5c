"""An agent cannot change intents through the daemon: a command it runs through intentd is refused
every edit method, while the person's CLI in the person's own terminal makes the same edit."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.intents_edit.conftest import HAND_WRITTEN, intents_file

EDITS = [protocol.INTENTS_CREATE, protocol.INTENTS_UPDATE_STATUS, protocol.INTENTS_SCOPE_ADD,
         protocol.INTENTS_SCOPE_REMOVE, protocol.INTENTS_SCOPE_SET, protocol.INTENTS_REMOVE]


def cli(daemon: DaemonProcess, ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "intentd.daemon.cli", "intents", *args, "--workspace", str(ws),
            "--socket", str(daemon.socket_path)]


def test_every_edit_method_is_the_persons() -> None:
    assert all(protocol.is_person_method(m) for m in EDITS)
    assert not protocol.is_person_method(protocol.INTENTS_PREVIEW_SCOPE)
    assert not protocol.is_person_method(protocol.INTENTS_READ)


def test_a_command_an_agent_runs_through_intentd_cannot_widen_its_scope(
        daemon: DaemonProcess, person: Client, ws: Path) -> None:
    session = person.call(protocol.SESSIONS_OPEN, {"workspace": str(ws)})["session_id"]
    person.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "AUTH"})
    command = " ; ".join(shlex.join(cli(daemon, ws, *args)) for args in (
        ("scope", "add", "AUTH", "**"), ("status", "DOCS", "IN_PROGRESS"), ("remove", "DOCS"),
        ("add", "MINE", "--name", "mine", "--scope", "**", "--status", "IN_PROGRESS")))
    done = person.call(protocol.TOOLS_CALL, {"session_id": session, "tool": "execute_command",
                                             "args": {"command": command}}, timeout=60)
    assert done["approved_by"] == "auto", done
    output = done["result"]["output"]
    assert output.count("is for the person only") == 4, output
    assert intents_file(ws).read_text() == HAND_WRITTEN
    ledger = person.call(protocol.LEDGER_QUERY, {"workspace": str(ws), "limit": 50})["entries"]
    assert {e["intent"]["tool"] for e in ledger if e["stage"] == "trust"} == {
        protocol.INTENTS_SCOPE_ADD, protocol.INTENTS_UPDATE_STATUS, protocol.INTENTS_REMOVE,
        protocol.INTENTS_CREATE}


def test_the_persons_cli_makes_the_same_edits(daemon: DaemonProcess, ws: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cli(daemon, ws, *args), capture_output=True, text=True, timeout=60)

    added = run("add", "LIB", "--name", "The library", "--scope", "lib/**", "--status",
                "IN_PROGRESS")
    assert added.returncode == 0, added.stderr
    assert run("scope", "add", "LIB", "!lib/vendor/**").returncode == 0
    assert run("scope", "remove", "AUTH", "tests/auth/**").returncode == 0
    assert run("status", "DOCS", "COMPLETED").returncode == 0
    listing = run("list").stdout
    assert "LIB   IN_PROGRESS  The library" in listing
    assert "scope: lib/**, !lib/vendor/**" in listing
    assert "DOCS  COMPLETED    A folded name  (not selectable)" in listing
    bad = run("status", "DOCS", "DONE")
    assert bad.returncode == 1
    assert f"{intents_file(ws)}:23: status 'DONE' is not one the policy knows" in bad.stderr
    assert run("remove", "LIB").returncode == 0
    listed = json.loads(run("list", "--json").stdout)["intents"]
    assert [(i["id"], i["status"], i["owned_scope"]) for i in listed] == [
        ("AUTH", "IN_PROGRESS", ["src/auth/**", "docs/auth.md"]),
        ("DOCS", "COMPLETED", [])]
    text = intents_file(ws).read_text()
    assert text.startswith("# The person's intents.   Keep this header!")
    assert "      - !!str docs/auth.md\n      # - src/legacy/**   (not yet)" in text
