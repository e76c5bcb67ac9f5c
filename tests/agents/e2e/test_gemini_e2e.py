"""End to end: the real Gemini CLI (pinned in clis.py) through intentd's hooks, against a fake
Gemini API on loopback that scripts the model's function calls.

`intentd hook install gemini --user` wires a scratch HOME's ~/.gemini/settings.json; `gemini -p`
then runs the script: a write the gate refuses, the intent selected with `intentd hook select`,
the same write held in the approval queue until a person answers from another client, a read
and an edit, and the receipts in the ledger under the agent's name.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.approval_watch import ApprovalWatcher, Reply
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.clis import GEMINI, installed
from tests.agents.fake_gemini import FakeGeminiAPI, Turn, call, text
from tests.agents.gemini_run import environment, make_home, run_gemini

pytestmark = pytest.mark.timeout(600)
FIXTURES = Path(__file__).parent.parent / "gemini_fixtures"
APP = "def greet():\n    return 'hello'\n"


class WatchingPerson:
    """Approves every request from its own connection, noting the file the call would change as
    it was when the request arrived (unchanged: the call waits in the queue)."""

    def __init__(self, socket_path: Path, ws: Path) -> None:
        self.ws = ws
        self.seen: list[tuple[dict[str, Any], str | None]] = []
        self.watcher = ApprovalWatcher(socket_path, None, self._answer,
                                       client_name="test-person", timeout=20)

    def _answer(self, request: dict[str, Any]) -> Reply:
        target = self.ws / str(request.get("args", {}).get("path"))
        self.seen.append((request, target.read_text() if target.is_file() else None))
        time.sleep(1.0)  # a person takes a moment; Gemini's call waits meanwhile
        return Reply(True, None)

    def close(self) -> None:
        self.watcher.close()


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def prompt_text(request: dict[str, Any]) -> str:
    return json.dumps(request.get("contents"))


def test_gemini_refused_then_selects_then_its_write_waits_for_a_person_and_lands(
        daemon: DaemonProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    program = installed(GEMINI)
    home, ws = tmp_path / "home", make_workspace(tmp_path / "proj", files={"src/app.py": APP})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    make_home(home)
    monkeypatch.setenv("HOME", str(home))  # install writes the scratch HOME's settings
    assert main(["hook", "install", "gemini", "--user", "--socket",
                 str(daemon.socket_path)]) == 0
    assert "Gemini CLI now runs its tool calls through intentd" in capsys.readouterr().out
    feature = ws / "src" / "feature.py"
    started = time.monotonic()
    person = WatchingPerson(daemon.socket_path, ws)
    try:
        with FakeGeminiAPI([
            Turn([call("write_file", file_path="src/feature.py", content="FEATURE = True\n")]),
            Turn([text("I need an intent first."),
                  call("run_shell_command", command="intentd hook select INT-1",
                       description="Select the intent")]),
            Turn([call("write_file", file_path="src/feature.py", content="FEATURE = True\n")]),
            Turn([call("read_file", file_path="src/app.py"),  # two calls in one turn
                  call("list_directory", dir_path="src")]),
            Turn([call("replace", file_path="src/app.py", old_string="'hello'",
                       new_string="'hello, world'", instruction="Greet the world")]),
            Turn([text("The feature flag is in src/feature.py.")]),
        ]) as api:
            done = run_gemini(program, ws, environment(home, api.url, tmp_path / "state"),
                              "Add the feature flag")
            results = api.function_responses()
            first = api.requests[0]
    finally:
        person.close()
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    assert [r["name"] for r in results] == ["write_file", "run_shell_command", "write_file",
                                           "read_file", "list_directory", "replace"]
    refused, selected, written, read, listed, edited = (r["response"] for r in results)
    # 1. the gate refused the write, and the model was told how to select
    assert refused["error"].startswith("Tool execution blocked: intentd (intent_gate)")
    assert GATE_MESSAGE in refused["error"] and "intentd hook select <INTENT_ID>" in refused["error"]
    # the SessionStart hook gave the model the handshake with its prompt (non-interactive)
    assert "intentd hook select INTENT_ID" in prompt_text(first) and "INT-1" in prompt_text(first)
    # 2. the selection went through; the command ran in Gemini's shell and printed the context
    assert "error" not in selected
    assert "intent_context" in selected["output"] and "INT-1" in selected["output"]
    # 3. the write waited for the person (not there when they were asked), was approved, landed
    tools = [(request["tool"], before) for request, before in person.seen]
    assert tools == [("write_to_file", None), ("replace_in_file", APP)]
    assert "error" not in written and feature.read_text() == "FEATURE = True\n"
    assert "error" not in read and "error" not in listed and "error" not in edited
    assert (ws / "src" / "app.py").read_text() == APP.replace("'hello'", "'hello, world'")
    # 4. the ledger names the agent, the intent and the person, with each receipt
    entries = [e for e in ledger(daemon, ws)
               if e.get("intent", {}).get("tool") in ("write_to_file", "replace_in_file")]
    assert [(e["intent"]["tool"], e["decision"]) for e in entries][0] == ("write_to_file",
                                                                          "deny")
    assert all(e["intent"]["agent"] == "gemini" for e in entries)
    landed = [e for e in entries if e["decision"] == "allow"]
    assert [e["intent"]["tool"] for e in landed] == ["write_to_file", "replace_in_file"]
    for entry in landed:
        assert entry["intent"]["intent_id"] == "INT-1" and entry["approved_by"] == "person"
        assert entry["receipt"]["result"] == "success"
    reads = [e for e in ledger(daemon, ws)
             if e.get("intent", {}).get("tool") in ("read_file", "list_files")]
    assert sorted(e["intent"]["tool"] for e in reads) == ["list_files", "read_file"]
    assert all(e.get("receipt", {}).get("result") == "success" for e in reads), reads
    print(f"gemini e2e: {elapsed:.1f} s for one gemini -p run of 6 model turns")


def test_gemini_payloads_still_have_the_fields_of_the_fixtures(tmp_path: Path) -> None:
    """The pinned CLI's payloads, dumped by a plain hook, have the members the captured
    fixtures (which the adapter's tests use) have: a change on Gemini's side fails here."""
    program = installed(GEMINI)
    home, ws = tmp_path / "home", make_workspace(tmp_path / "proj", files={"src/app.py": APP})
    dump, hook = tmp_path / "dump.jsonl", tmp_path / "dump.sh"
    hook.write_text(f"#!/bin/sh\ncat >> '{dump}'\necho >> '{dump}'\necho '{{}}'\n")
    hook.chmod(0o755)
    events = ("SessionStart", "BeforeTool", "AfterTool", "SessionEnd")
    make_home(home, hooks={event: [{"matcher": "*", "hooks": [
        {"name": "dump", "type": "command", "command": str(hook)}]}] for event in events})
    fixture = json.loads((FIXTURES / "captured_0.61.0.json").read_text())["events"]
    script = [Turn([call(e["tool_name"], **e["tool_input"])]) for e in fixture
              if e["hook_event_name"] == "BeforeTool"]
    with FakeGeminiAPI([*script, Turn([text("Done.")])]) as api:
        done = run_gemini(program, ws, environment(home, api.url, tmp_path / "state"), "go")
    assert done.returncode == 0, done.stderr[-3000:]
    live = [json.loads(line) for line in dump.read_text().splitlines() if line.strip()]

    def shape(payload: dict[str, Any]) -> tuple[Any, ...]:
        response = payload.get("tool_response")
        return (payload["hook_event_name"], payload.get("tool_name"), sorted(payload),
                sorted(response) if isinstance(response, dict) else None)

    assert [shape(p) for p in live] == [shape(p) for p in fixture]
    assert all(p["cwd"] == str(ws) for p in live)


def test_a_sub_agents_write_goes_through_the_gate_too(
        daemon: DaemonProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`invoke_agent` itself is left to Gemini; the sub-agent's own tool calls run through the
    same scheduler, so through intentd's BeforeTool hook: its write is refused like any other."""
    program = installed(GEMINI)
    home, ws = tmp_path / "home", make_workspace(tmp_path / "proj", files={"src/app.py": APP})
    make_home(home)
    monkeypatch.setenv("HOME", str(home))
    assert main(["hook", "install", "gemini", "--user", "--socket",
                 str(daemon.socket_path)]) == 0
    with FakeGeminiAPI([
        Turn([call("invoke_agent", agent_name="generalist", prompt="Add src/sub.py")]),
        Turn([call("write_file", file_path="src/sub.py", content="SUB = 1\n")]),  # the sub-agent
        Turn([call("complete_task", result={"response": "could not write"})]),
        Turn([text("The sub-agent could not write.")]),
    ]) as api:
        done = run_gemini(program, ws, environment(home, api.url, tmp_path / "state"), "Go")
        sub_turns = [prompt_text(r) for r in api.requests]
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (ws / "src" / "sub.py").exists()
    assert any("Tool execution blocked: intentd (intent_gate)" in t for t in sub_turns)
    refused = [e for e in ledger(daemon, ws) if e.get("intent", {}).get("tool") == "write_to_file"]
    assert [(e["decision"], e["intent"]["agent"]) for e in refused] == [("deny", "gemini")]
