"""End to end: the real Claude Code CLI (pinned in clis.py) through the daemon's HTTP hook, no
hook process per tool call, against a fake Messages API on loopback that scripts the model.

`intentd hook install claude-code --http` writes the workspace's settings; `claude -p` then runs
the script: a write the gate refuses, the intent selected with `intentd hook select`, the same
write held in the approval queue until a person answers from another client, and the receipt
in the ledger under the agent's name. Without the token, or with the daemon gone, the write
never lands (`"onFailure": "block"`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.server.hook_token import TOKEN_ENV
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.clis import CLAUDE_CODE, installed
from tests.agents.conftest import Person
from tests.agents.fake_api import FakeMessagesAPI, Turn, text, tool_use
from tests.server.http_hook_client import hook_files

RUN_TIMEOUT = 240
FEATURE = "FEATURE = True\n"


@pytest.fixture
def claude() -> Path:
    return installed(CLAUDE_CODE)


@pytest.fixture
def hook_daemon(short_dir: Path) -> Any:
    with DaemonProcess(short_dir / "d.sock", short_dir / "state",
                       extra_env={"INTENTD_HTTP_HOOK": "0"}) as process:
        yield process


def install(ws: Path, socket: Path, port: int) -> dict[str, Any]:
    """`intentd hook install claude-code --http` for this workspace; the settings it wrote."""
    assert main(["hook", "install", "claude-code", "--http", "--workspace", str(ws),
                 "--socket", str(socket), "--port", str(port)]) == 0
    settings: dict[str, Any] = json.loads((ws / ".claude" / "settings.json").read_text())
    return settings


def run_claude(program: Path, api: FakeMessagesAPI, ws: Path, home: Path,
               token: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "HOME": str(home), "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-fake",
           TOKEN_ENV: token, "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
           "NO_COLOR": "1"}
    if "PYTHONPATH" in os.environ:  # the SessionStart command hook runs this intentd
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run([str(program), "-p", "Add the feature flag", "--output-format", "json"],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          stdin=subprocess.DEVNULL)


def tool_results(api: FakeMessagesAPI) -> dict[str, dict[str, Any]]:
    """Every tool_result Claude Code sent back, by tool_use_id."""
    found: dict[str, dict[str, Any]] = {}
    for request in api.requests:
        for message in request.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content)
    return str(content)


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def write_turn(ws: Path, use_id: str) -> Turn:
    return Turn([tool_use(use_id, "Write", file_path=str(ws / "src" / "feature.py"),
                          content=FEATURE)])


def test_claude_code_refused_then_selects_then_its_write_waits_for_a_person_and_lands(
        claude: Path, hook_daemon: DaemonProcess, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    port, token = hook_files(hook_daemon.state_dir)
    settings = install(ws, hook_daemon.socket_path, port)
    pre = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    assert pre["type"] == "http" and pre["onFailure"] == "block"
    started = time.monotonic()
    person = Person(hook_daemon.socket_path)  # the app's side: answers from another connection
    try:
        with FakeMessagesAPI([
            write_turn(ws, "toolu_refused"),
            Turn([tool_use("toolu_select", "Bash", command="intentd hook select INT-1",
                           description="Select the intent")]),
            write_turn(ws, "toolu_write"),
            Turn([text("The feature flag is in src/feature.py.")], stop_reason="end_turn"),
        ]) as api:
            done = run_claude(claude, api, ws, home, token)
    finally:
        person.close()
    elapsed = time.monotonic() - started
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert "Invalid" not in done.stderr and "settings" not in done.stderr.lower(), done.stderr
    results = tool_results(api)
    # 1. the gate refused the write, and the model was told how to select
    refused = result_text(results["toolu_refused"])
    assert results["toolu_refused"].get("is_error") and GATE_MESSAGE in refused
    assert "intentd hook select <INTENT_ID>" in refused
    # the SessionStart command hook gave the model the handshake and the intents
    first = json.dumps(api.requests[0])
    assert "intentd hook select" in first and "INT-1" in first
    # 2. the selection went through, and the command printed the intent's context
    assert not results["toolu_select"].get("is_error"), results["toolu_select"]
    assert "INT-1" in result_text(results["toolu_select"])
    # 3. the write waited for the person, was approved and landed
    assert [seen["tool"] for seen in person.seen] == ["write_to_file"]
    assert "+FEATURE = True" in str(person.seen[0]["diff"])
    assert not results["toolu_write"].get("is_error"), results["toolu_write"]
    assert (ws / "src" / "feature.py").read_text() == FEATURE
    # 4. the ledger names the agent, the intent and the person, with the receipt
    written = [e for e in ledger(hook_daemon, ws)
               if e["intent"]["tool"] == "write_to_file" and "decision" in e]
    refused_entry, landed = written[0], written[-1]
    assert refused_entry["decision"] == "deny" and refused_entry["stage"] == "intent_gate"
    assert {e["intent"]["agent"] for e in written} == {"claude-code"}
    assert landed["intent"]["intent_id"] == "INT-1" and landed["approved_by"] == "person"
    assert landed["receipt"]["result"] == "success"
    print(f"claude code http e2e: {elapsed:.1f} s for one claude -p run of 4 model turns")


def test_without_the_token_claude_code_cannot_write(
        claude: Path, hook_daemon: DaemonProcess, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    port, _ = hook_files(hook_daemon.state_dir)
    install(ws, hook_daemon.socket_path, port)
    with FakeMessagesAPI([write_turn(ws, "toolu_w"),
                          Turn([text("done")], stop_reason="end_turn")]) as api:
        done = run_claude(claude, api, ws, home, token="a-guess")
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (ws / "src" / "feature.py").exists()
    block = tool_results(api)["toolu_w"]
    assert block.get("is_error") and "token is missing or wrong" in result_text(block)


def test_with_the_daemon_gone_claude_code_cannot_write(
        claude: Path, hook_daemon: DaemonProcess, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    port, token = hook_files(hook_daemon.state_dir)
    install(ws, hook_daemon.socket_path, port)
    hook_daemon.stop()  # nothing listens on the port any more
    with FakeMessagesAPI([write_turn(ws, "toolu_w"),
                          Turn([tool_use("toolu_b", "Bash", command="echo no > src/x.py",
                                         description="write")]),
                          Turn([text("done")], stop_reason="end_turn")]) as api:
        done = run_claude(claude, api, ws, home, token)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (ws / "src" / "feature.py").exists() and not (ws / "src" / "x.py").exists()
    results = tool_results(api)
    assert results["toolu_w"].get("is_error") and results["toolu_b"].get("is_error")
    assert "onFailure" in result_text(results["toolu_w"])


def test_the_user_level_settings_install_writes_are_accepted_and_gate(
        claude: Path, hook_daemon: DaemonProcess, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    port, token = hook_files(hook_daemon.state_dir)
    assert main(["hook", "install", "claude-code", "--http", "--user",
                 "--socket", str(hook_daemon.socket_path), "--port", str(port)]) == 0
    assert (home / ".claude" / "settings.json").is_file() and not (ws / ".claude").exists()
    with FakeMessagesAPI([write_turn(ws, "toolu_w"),
                          Turn([text("done")], stop_reason="end_turn")]) as api:
        done = run_claude(claude, api, ws, home, token)
    assert done.returncode == 0, done.stderr[-3000:]
    block = tool_results(api)["toolu_w"]
    assert block.get("is_error") and GATE_MESSAGE in result_text(block)
    assert not (ws / "src" / "feature.py").exists()
