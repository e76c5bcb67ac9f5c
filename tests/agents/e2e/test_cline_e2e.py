"""End to end: the real Cline CLI (pinned in clis.py) through intentd's hooks, against a fake
Chat Completions API on loopback that scripts the model's tool calls.

`intentd hook install cline --workspace` writes the hook files into `.clinerules/hooks/`; the
CLI runs headless (`cline "TASK"`, tools auto-approved, as it does by default) in a private
home. A refusal in Cline stops the task (`cancel: true`), so the story takes two runs, as a
person would run them (headless, `cline --id` would resume only in the terminal UI): the write
the gate refuses; then the task again, the intent selected with `intentd hook select`, the same
write held in the approval queue until a person answers from another client, and landing; the
ledger naming the agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.cline_run import cline_env, command, write_provider
from tests.agents.clis import CLINE, installed
from tests.agents.conftest import Person
from tests.agents.fake_chat import FakeChatAPI, Reply, tool_call

MODEL = "fake-model"  # not a GPT name: Cline gives it the editor tool (GPT models: apply_patch)
RUN_TIMEOUT = 240


@pytest.fixture
def cline(tmp_path: Path) -> Path:
    return installed(CLINE)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def run_cline(program: Path, home: Path, ws: Path, prompt: str, *options: str,
              backend: str = "local") -> subprocess.CompletedProcess[str]:
    env = cline_env(home, XDG_STATE_HOME=os.environ["XDG_STATE_HOME"],
                    CLINE_SESSION_BACKEND_MODE=backend)
    return subprocess.run(command(program, MODEL, prompt, "--json", *options), cwd=ws, env=env,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          stdin=subprocess.DEVNULL)


def events(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def test_cline_refused_then_selects_then_its_write_waits_for_a_person_and_lands(
        cline: Path, home: Path, ws: Path, daemon: DaemonProcess,
        capsys: pytest.CaptureFixture[str]) -> None:
    # a hook of the person's own beside intentd's: Cline runs both, and a refusal wins
    own = ws / ".clinerules" / "hooks" / "PreToolUse.sh"
    own.parent.mkdir(parents=True)
    own.write_text(f"#!/bin/sh\ncat >> {ws / 'own-hook.log'}\necho >> {ws / 'own-hook.log'}\n"
                   "echo '{\"cancel\": false}'\n")
    own.chmod(0o755)
    assert main(["hook", "install", "cline", "--workspace", str(ws),
                 "--socket", str(daemon.socket_path)]) == 0
    assert "Cline now runs its tool calls through intentd" in capsys.readouterr().out
    feature = str(ws / "src" / "feature.py")
    started = time.monotonic()
    person = Person(daemon.socket_path)  # the app's side: answers from another connection
    try:
        with FakeChatAPI([
            # run 1: a read goes through; the write before any intent stops the task
            Reply("", [tool_call("read_files", "call_read", files=[{"path": f"{ws}/src/app.py"}])]),
            Reply("", [tool_call("editor", "call_refused", path=feature,
                                 new_text="FEATURE = True\n")]),
            # run 2, the task started again: select, then the same write
            Reply("", [tool_call("run_commands", "call_select",
                                 commands=["intentd hook select INT-1"])]),
            Reply("", [tool_call("editor", "call_write", path=feature,
                                 new_text="FEATURE = True\n")]),
            Reply("The feature flag is in src/feature.py."),
        ]) as api:
            write_provider(home, api.url, MODEL)
            first = run_cline(cline, home, ws, "Add the feature flag")
            asked_in_first = len(api.requests)
            second = run_cline(cline, home, ws, "Select the intent, then add the flag")
    finally:
        person.close()
    elapsed = time.monotonic() - started
    # 1. the gate refused the write: Cline stopped the task there, nothing written
    assert first.returncode == 0, first.stderr[-3000:]
    assert asked_in_first == 2
    assert events(first)[-1]["type"] == "run_aborted"
    assert api.tool_results()["call_read"].startswith('[{"query"')  # the read ran
    # and its hook answer taught the model the handshake (Cline drops TaskStart's context)
    taught = json.dumps(api.requests[1]["messages"])
    assert "intentd hook select <INTENT_ID>" in taught and "INT-1" in taught
    assert "call_refused" not in api.tool_results()
    # 2. the selection went through: the command ran in Cline's shell, and the hook gave the
    #    model the intent's context with it
    assert second.returncode == 0, second.stderr[-3000:]
    assert "id: INT-1" in api.tool_results()["call_select"]
    after_select = json.dumps(api.requests[3]["messages"])
    assert "<hook_context source=\\\"PreToolUse\\\"" in after_select
    assert "<intent_context>" in after_select
    # 3. the write waited for the person, was approved and landed
    assert [seen["tool"] for seen in person.seen] == ["write_to_file"]
    assert "+FEATURE = True" in str(person.seen[0]["diff"])
    assert "File created successfully" in api.tool_results()["call_write"]
    assert Path(feature).read_text() == "FEATURE = True\n"
    assert events(second)[-1]["type"] == "run_result"
    # 4. the ledger names the agent, the intent and the person, with the receipt
    written = [e for e in ledger(daemon, ws) if e["intent"]["tool"] == "write_to_file"]
    refused, landed = written[0], written[-1]
    assert refused["decision"] == "deny" and refused["intent"]["agent"] == "cline"
    assert landed["intent"]["agent"] == "cline" and landed["intent"]["intent_id"] == "INT-1"
    assert landed["approved_by"] == "person"
    assert landed["receipt"]["result"] == "success"
    # the person's own hook saw every call, the refused one included
    seen = (ws / "own-hook.log").read_text()
    assert seen.count('"name":"editor"') == 2 and seen.count('"name":"run_commands"') == 1
    print(f"cline e2e: {elapsed:.1f} s for two cline runs of 5 model turns")


def test_with_the_daemon_gone_cline_cannot_write(cline: Path, home: Path, ws: Path,
                                                 short_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed for the user this time (~/Documents/Cline/Hooks, which the CLI reads too)."""
    monkeypatch.setenv("HOME", str(home))
    assert main(["hook", "install", "cline", "--user", "--socket",
                 str(short_dir / "gone.sock")]) == 0
    assert (home / "Documents" / "Cline" / "Hooks" / "PreToolUse").is_file()
    assert not (ws / ".clinerules").exists()
    with FakeChatAPI([
        Reply("", [tool_call("run_commands", "call_c", commands=["echo no > src/x.py"])]),
        Reply("could not"),
    ]) as api:
        write_provider(home, api.url, MODEL)
        done = run_cline(cline, home, ws, "Write x")
    assert done.returncode == 0, done.stderr[-3000:]
    assert events(done)[-1]["type"] == "run_aborted" and len(api.requests) == 1
    assert not (ws / "src" / "x.py").exists()


def test_a_hook_that_cannot_even_start_still_refuses(cline: Path, home: Path, ws: Path,
                                                     tmp_path: Path) -> None:
    """Cline lets a call through when its hook prints no JSON: the installed file prints the
    refusal itself (without it, this write would land)."""
    assert main(["hook", "install", "cline", "--workspace", str(ws),
                 "--command", str(tmp_path / "uninstalled" / "intentd")]) == 0
    with FakeChatAPI([
        Reply("", [tool_call("editor", "call_w", path=f"{ws}/src/feature.py", new_text="x\n")]),
        Reply("could not"),
    ]) as api:
        write_provider(home, api.url, MODEL)
        done = run_cline(cline, home, ws, "Add the feature flag")
    assert done.returncode == 0, done.stderr[-3000:]
    assert events(done)[-1]["type"] == "run_aborted"
    assert not (ws / "src" / "feature.py").exists()


def test_in_the_hub_cline_starts_by_default_the_gate_holds_too(cline: Path, home: Path, ws: Path,
                                                                daemon: DaemonProcess) -> None:
    """By default the CLI runs the session in a background hub process, which runs the hooks."""
    assert main(["hook", "install", "cline", "--workspace", str(ws),
                 "--socket", str(daemon.socket_path)]) == 0
    try:
        with FakeChatAPI([
            Reply("", [tool_call("run_commands", "call_c", commands=["echo no > src/x.py"])]),
            Reply("could not"),
        ]) as api:
            write_provider(home, api.url, MODEL)
            done = run_cline(cline, home, ws, "Write x", backend="hub")
    finally:
        subprocess.run([str(cline), "hub", "stop"], cwd=ws, env=cline_env(home),
                       capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    assert events(done)[-1]["type"] == "run_aborted" and len(api.requests) == 1
    assert not (ws / "src" / "x.py").exists()
    refused = [e for e in ledger(daemon, ws) if e["intent"]["tool"] == "execute_command"]
    assert refused[0]["decision"] == "deny" and refused[0]["intent"]["agent"] == "cline"


def test_a_turn_of_several_calls_is_asked_about_call_by_call_before_any_runs(
        cline: Path, home: Path, ws: Path, daemon: DaemonProcess) -> None:
    """Cline runs every PreToolUse of a turn before it runs any of its tools: the selection, a
    read and an edit of the same file in one turn still go through in that order."""
    assert main(["hook", "install", "cline", "--workspace", str(ws),
                 "--socket", str(daemon.socket_path)]) == 0
    app = str(ws / "src" / "app.py")
    person = Person(daemon.socket_path)
    try:
        with FakeChatAPI([
            Reply("", [tool_call("run_commands", "call_s", commands=["intentd hook select INT-1"]),
                       tool_call("read_files", "call_r", files=[{"path": app}]),
                       tool_call("editor", "call_e", path=app, old_text="x = 1",
                                 new_text="x = 2")]),
            Reply("Done."),
        ]) as api:
            write_provider(home, api.url, MODEL)
            done = run_cline(cline, home, ws, "Set x to 2")
    finally:
        person.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert events(done)[-1]["type"] == "run_result"
    assert [seen["tool"] for seen in person.seen] == ["replace_in_file"]
    assert Path(app).read_text() == "x = 2\n"
    assert "Edited" in api.tool_results()["call_e"]
    receipts = {e["intent"]["tool"]: e for e in ledger(daemon, ws) if e.get("receipt")}
    assert receipts["replace_in_file"]["receipt"]["result"] == "success"
    assert receipts["replace_in_file"]["intent"]["agent"] == "cline"
