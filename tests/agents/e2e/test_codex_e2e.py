"""End to end: the real Codex CLI (pinned in clis.py) through intentd's hooks, against a fake
Responses API on loopback that scripts the model's tool calls.

`intentd hook install codex --user` wires a scratch CODEX_HOME (and trusts intentd's hooks
with the hashes Codex computes); `codex exec` then runs the script: a write the gate refuses,
the intent selected with `intentd hook select`, the same write held in the approval queue until
a person answers from another client, and the receipt in the ledger under the agent's name.
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
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.clis import CODEX, installed
from tests.agents.conftest import Person
from tests.agents.fake_openai import (
    FakeResponsesAPI,
    Reply,
    custom_tool_call,
    function_call,
    message,
    namespaced_call,
    provider_config,
    tool_search_call,
)

MODEL = "gpt-5.5"  # a model Codex knows: its tools include the freeform apply_patch
RUN_TIMEOUT = 240
PATCH = "*** Begin Patch\n*** Add File: src/feature.py\n+FEATURE = True\n*** End Patch\n"


@pytest.fixture
def codex(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    program = installed(CODEX)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    return program


def run_codex(program: Path, api: FakeResponsesAPI, ws: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [str(program), "exec", "--skip-git-repo-check", *provider_config(api.url, MODEL),
         "-s", "workspace-write", "-C", str(ws), "Add the feature flag"],
        env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def test_codex_refused_then_selects_then_its_write_waits_for_a_person_and_lands(
        codex: Path, daemon: DaemonProcess, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert main(["hook", "install", "codex", "--user", "--socket", str(daemon.socket_path)]) == 0
    assert "Codex CLI now runs its tool calls through intentd" in capsys.readouterr().out
    hooks = json.loads((tmp_path / "codex-home" / "hooks.json").read_text())
    assert "PreToolUse" in hooks["hooks"]
    started = time.monotonic()
    person = Person(daemon.socket_path)  # the app's side: answers from another connection
    try:
        with FakeResponsesAPI([
            Reply([custom_tool_call("apply_patch", PATCH, call_id="call_refused")]),
            Reply([function_call("exec_command", call_id="call_select",
                                 cmd="intentd hook select INT-1")]),
            Reply([custom_tool_call("apply_patch", PATCH, call_id="call_write")]),
            Reply([message("The feature flag is in src/feature.py.")]),
        ]) as api:
            done = run_codex(codex, api, ws)
    finally:
        person.close()
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    outputs = api.tool_outputs()
    # 1. the gate refused the write, and the model was told how to select
    assert "blocked by PreToolUse hook" in outputs["call_refused"]
    assert GATE_MESSAGE in outputs["call_refused"]
    assert "intentd hook select <INTENT_ID>" in outputs["call_refused"]
    # the SessionStart hook gave the model the handshake before its first turn
    first = json.dumps(api.requests[0]["input"])
    assert "intentd hook select <INTENT_ID>" in first and "INT-1" in first
    # 2. the selection went through; the command itself ran in Codex's shell and printed the
    #    intent's context for the model
    assert "blocked" not in outputs["call_select"]
    assert "<intent_context>" in outputs["call_select"] and "id: INT-1" in outputs["call_select"]
    # ... and the hook's answer gave it to the model as context too (a developer message)
    developer = [json.dumps(i) for i in api.requests[2]["input"] if i.get("role") == "developer"]
    assert any("<intent_context>" in text for text in developer)
    # 3. the write waited for the person, was approved and landed
    assert [seen["tool"] for seen in person.seen] == ["write_to_file"]
    assert "+FEATURE = True" in str(person.seen[0]["diff"])
    assert "Success" in outputs["call_write"]
    assert (ws / "src" / "feature.py").read_text() == "FEATURE = True\n"
    # 4. the ledger names the agent, the intent and the person, with the receipt
    written = [e for e in ledger(daemon, ws) if e["intent"]["tool"] == "write_to_file"]
    refused, landed = written[0], written[-1]
    assert refused["decision"] == "deny" and refused["intent"]["agent"] == "codex"
    assert landed["intent"]["agent"] == "codex" and landed["intent"]["intent_id"] == "INT-1"
    assert landed["approved_by"] == "person"
    assert landed["receipt"]["result"] == "success"
    print(f"codex e2e: {elapsed:.1f} s for one codex exec run of 4 model turns")


def test_with_the_daemon_gone_codex_cannot_write(codex: Path, tmp_path: Path,
                                                 short_dir: Path) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert main(["hook", "install", "codex", "--user", "--socket",
                 str(short_dir / "gone.sock")]) == 0
    with FakeResponsesAPI([
        Reply([custom_tool_call("apply_patch", PATCH, call_id="call_w")]),
        Reply([function_call("exec_command", call_id="call_c", cmd="echo no > src/x.py")]),
        Reply([message("could not")]),
    ]) as api:
        done = run_codex(codex, api, ws)
    assert done.returncode == 0, done.stderr[-3000:]
    outputs = api.tool_outputs()
    for call in ("call_w", "call_c"):
        assert "blocked by PreToolUse hook" in outputs[call] and "intentd serve" in outputs[call]
    assert not (ws / "src" / "feature.py").exists() and not (ws / "src" / "x.py").exists()


def test_a_hook_that_cannot_even_start_still_refuses(codex: Path, tmp_path: Path) -> None:
    """Codex lets a call through when its hook exits 127: the installed command turns that into
    exit 2 with a reason (without it, this write would land)."""
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert main(["hook", "install", "codex", "--user",
                 "--command", str(tmp_path / "uninstalled" / "intentd")]) == 0
    with FakeResponsesAPI([
        Reply([custom_tool_call("apply_patch", PATCH, call_id="call_w")]),
        Reply([message("could not")]),
    ]) as api:
        done = run_codex(codex, api, ws)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "intentd: the hook could not run; the call is refused" in api.tool_outputs()["call_w"]
    assert not (ws / "src" / "feature.py").exists()


def test_parallel_calls_of_one_turn_are_each_gated(codex: Path, daemon: DaemonProcess,
                                                   tmp_path: Path) -> None:
    """Codex runs one turn's calls (and their hooks) at once: one session, one keeper, each
    call decided on its own."""
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert main(["hook", "install", "codex", "--user", "--socket", str(daemon.socket_path)]) == 0
    inside = "*** Begin Patch\n*** Add File: src/a.py\n+A = 1\n*** End Patch\n"
    outside = "*** Begin Patch\n*** Add File: docs/b.md\n+no\n*** End Patch\n"
    person = Person(daemon.socket_path)
    try:
        with FakeResponsesAPI([
            Reply([function_call("exec_command", call_id="call_select",
                                 cmd="intentd hook select INT-1")]),
            Reply([function_call("exec_command", call_id="call_read", cmd="cat src/app.py"),
                   custom_tool_call("apply_patch", inside, call_id="call_in"),
                   custom_tool_call("apply_patch", outside, call_id="call_out")]),
            Reply([message("done")]),
        ]) as api:
            done = run_codex(codex, api, ws)
    finally:
        person.close()
    assert done.returncode == 0, done.stderr[-3000:]
    outputs = api.tool_outputs()
    assert "x = 1" in outputs["call_read"]
    assert "Success" in outputs["call_in"] and (ws / "src" / "a.py").read_text() == "A = 1\n"
    assert "blocked by PreToolUse hook" in outputs["call_out"] and "scope" in outputs["call_out"]
    assert not (ws / "docs" / "b.md").exists()
    entries = ledger(daemon, ws)
    assert len({e["intent"]["session"] for e in entries}) == 1  # one daemon session
    assert {e["intent"]["tool"] for e in entries} >= {"read_file", "write_to_file"}


class McpModel:
    """A scripted model that finds intentd's MCP tools with Codex's tool_search (Codex starts
    MCP servers in the background, so it searches again until they are there), selects the
    intent through the server, then writes."""

    def __init__(self) -> None:
        self.steps = 0
        self.namespace: str | None = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.steps += 1
        for item in body.get("input") or []:
            if item.get("type") == "tool_search_output" and item.get("tools"):
                self.namespace = item["tools"][0]["name"]
        if self.namespace is None:
            if self.steps > 40:
                return Reply([message("intentd's MCP tools never appeared")])
            if self.steps % 2:
                return Reply([function_call("exec_command", cmd="sleep 1")])
            return Reply([tool_search_call("select_active_intent intent")])
        done = {item.get("call_id") for item in body.get("input") or []}
        if "call_select" not in done:
            return Reply([namespaced_call(self.namespace, "select_active_intent",
                                          call_id="call_select", intent_id="INT-1")])
        if "call_write" not in done:
            return Reply([custom_tool_call("apply_patch", PATCH, call_id="call_write")])
        return Reply([message("done")])


def test_codex_selects_through_intentds_mcp_server(codex: Path, daemon: DaemonProcess,
                                                   tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert main(["hook", "install", "codex", "--user", "--socket", str(daemon.socket_path)]) == 0
    subprocess.run([str(codex), "mcp", "add", "intentd", "--", sys.executable, "-m",
                    "intentd.daemon.cli", "mcp", "--workspace", str(ws), "--socket",
                    str(daemon.socket_path)], check=True, capture_output=True, timeout=60)
    model = McpModel()
    person = Person(daemon.socket_path)
    try:
        with FakeResponsesAPI([model] * 50) as api:
            done = run_codex(codex, api, ws)
    finally:
        person.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert model.namespace == "mcp__intentd", "intentd's MCP tools never appeared"
    outputs = api.tool_outputs()
    assert "<intent_context>" in outputs["call_select"]  # the server answered the selection
    assert "Success" in outputs["call_write"]  # and the hook's session had it selected too
    assert (ws / "src" / "feature.py").read_text() == "FEATURE = True\n"
    (written,) = [e for e in ledger(daemon, ws) if e["intent"]["tool"] == "write_to_file"]
    assert written["intent"]["agent"] == "codex" and written["intent"]["intent_id"] == "INT-1"
    assert written["approved_by"] == "person"
