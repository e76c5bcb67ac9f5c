"""End to end: the real Claude Code CLI (pinned in clis.py) through the command hook that
`intentd hook install claude-code` writes, a process per tool call, against a fake Messages API
on loopback that scripts the model: a write the gate refuses, the intent selected, the write
approved from another client and landed, the ledger naming the agent; and with no daemon the
write never lands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.cli import main
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.clis import CLAUDE_CODE, installed
from tests.agents.conftest import Person
from tests.agents.e2e.test_claude_code_http_e2e import (
    FEATURE,
    ledger,
    result_text,
    run_claude,
    tool_results,
    write_turn,
)
from tests.agents.fake_api import FakeMessagesAPI, Turn, text, tool_use


@pytest.fixture
def claude() -> Path:
    return installed(CLAUDE_CODE)


def install(ws: Path, socket: Path) -> dict[str, Any]:
    assert main(["hook", "install", "claude-code", "--workspace", str(ws),
                 "--socket", str(socket)]) == 0
    settings: dict[str, Any] = json.loads((ws / ".claude" / "settings.json").read_text())
    return settings


def test_claude_code_through_the_installed_command_hook(claude: Path, daemon: DaemonProcess,
                                                        tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    pre = install(ws, daemon.socket_path)["hooks"]["PreToolUse"][0]["hooks"][0]
    assert pre["type"] == "command" and pre["onFailure"] == "block"
    person = Person(daemon.socket_path)
    try:
        with FakeMessagesAPI([
            write_turn(ws, "toolu_refused"),
            Turn([tool_use("toolu_select", "Bash", command="intentd hook select INT-1",
                           description="Select the intent")]),
            write_turn(ws, "toolu_write"),
            Turn([text("Done.")], stop_reason="end_turn"),
        ]) as api:
            done = run_claude(claude, api, ws, home, token="")
    finally:
        person.close()
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    results = tool_results(api)
    refused = result_text(results["toolu_refused"])
    assert results["toolu_refused"].get("is_error") and GATE_MESSAGE in refused
    first = json.dumps(api.requests[0])  # SessionStart's handshake reached the model
    assert "intentd hook select <INTENT_ID>" in first and "INT-1" in first
    assert not results["toolu_select"].get("is_error"), results["toolu_select"]
    assert [seen["tool"] for seen in person.seen] == ["write_to_file"]
    assert (ws / "src" / "feature.py").read_text() == FEATURE
    written = [e for e in ledger(daemon, ws)
               if e["intent"]["tool"] == "write_to_file" and "decision" in e]
    assert {e["intent"]["agent"] for e in written} == {"claude-code"}
    assert written[-1]["approved_by"] == "person"
    assert written[-1]["receipt"]["result"] == "success"


def test_with_no_daemon_the_command_hook_refuses_the_write(claude: Path, short_dir: Path,
                                                           tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    install(ws, short_dir / "nobody.sock")
    with FakeMessagesAPI([write_turn(ws, "toolu_w"),
                          Turn([text("done")], stop_reason="end_turn")]) as api:
        done = run_claude(claude, api, ws, home, token="")
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (ws / "src" / "feature.py").exists()
    block = tool_results(api)["toolu_w"]
    assert block.get("is_error") and "no intentd daemon" in result_text(block)
