"""`intentd hook claude-code` fed the JSON Claude Code sends, against a real daemon."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.state import StateFile
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.engine.engine import HANDED_OFF
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace, write_intents
from tests.agents.conftest import Person

SESSION = "3f0c1a9e-5b7d-4c2a-9e1f-0a1b2c3d4e5f"


def event(name: str, tool: str, tool_input: dict[str, Any], ws: Path, *, use_id: str = "toolu_1",
          response: Any = None, session: str = SESSION) -> dict[str, Any]:
    """A hook input as Claude Code documents it (common fields + the tool fields)."""
    payload: dict[str, Any] = {
        "session_id": session, "transcript_path": f"/home/me/.claude/projects/x/{session}.jsonl",
        "cwd": str(ws), "permission_mode": "default", "hook_event_name": name,
        "tool_name": tool, "tool_input": tool_input, "tool_use_id": use_id}
    if name == "PostToolUse":
        payload["tool_response"] = response if response is not None else {"success": True}
    return payload


class Hook:
    """Runs the hook in-process as Claude Code would run the command: JSON in, JSON out."""

    def __init__(self, socket_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str], *options: str) -> None:
        self.socket_path, self.ws, self.options = socket_path, ws, options
        self.monkeypatch, self.capsys = monkeypatch, capsys
        monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(ws))

    def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
        self.monkeypatch.setattr(sys, "stdin", stdin)
        self.capsys.readouterr()
        assert main(["hook", "claude-code", "--socket", str(self.socket_path), *self.options]) == 0
        out = self.capsys.readouterr().out.strip()
        return json.loads(out) if out else {}

    def pre(self, tool: str, tool_input: dict[str, Any],
            use_id: str = "toolu_1") -> tuple[str, str]:
        answer = self(event("PreToolUse", tool, tool_input, self.ws, use_id=use_id))
        out = answer["hookSpecificOutput"]
        assert out["hookEventName"] == "PreToolUse"
        return out["permissionDecision"], out["permissionDecisionReason"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", files={"src/app.py": "x = 1\n", "README.md": "# r\n"})


@pytest.fixture
def hook(daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Hook:
    return Hook(daemon.socket_path, ws, monkeypatch, capsys)


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def kill_keeper(daemon: DaemonProcess) -> None:
    """Stop the keeper this test's hook started, and wait until the daemon saw it go."""
    keeper_pid = StateFile("claude-code", SESSION).read().keeper_pid
    assert keeper_pid
    os.kill(keeper_pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    with Client(daemon.socket_path) as client:
        while client.call(protocol.SESSIONS_LIST)["sessions"] and time.monotonic() < deadline:
            time.sleep(0.05)


def test_a_write_before_an_intent_is_denied_with_the_gate_message(hook: Hook, ws: Path) -> None:
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "src/new.py"), "content": "y"})
    assert verdict == "deny"
    assert GATE_MESSAGE in reason and "intentd hook select <INTENT_ID>" in reason
    assert "INT-1" in reason


def test_the_handshake_then_scope_and_the_report_in_the_ledger(
        hook: Hook, ws: Path, daemon: DaemonProcess, person: Person) -> None:
    selected = hook(event("PreToolUse", "Bash", {"command": "intentd hook select INT-1"}, ws))
    out = selected["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow" and "<intent_context>" in out["additionalContext"]
    app = str(ws / "src" / "app.py")
    assert hook.pre("Read", {"file_path": app}, "toolu_r")[0] == "allow"
    hook(event("PostToolUse", "Read", {"file_path": app}, ws, use_id="toolu_r",
               response={"type": "text", "file": {"filePath": app}}))
    edit = {"file_path": app, "old_string": "x = 1", "new_string": "x = 2"}
    verdict, reason = hook.pre("Edit", edit, "toolu_e")
    assert verdict == "allow" and "approved by a person" in reason
    assert [a["tool"] for a in person.seen] == ["replace_in_file"]
    assert "+x = 2" in str(person.seen[0]["diff"])
    Path(app).write_text("x = 2\n")  # Claude Code runs the edit itself
    assert hook(event("PostToolUse", "Edit", edit, ws, use_id="toolu_e",
                      response={"filePath": app, "oldString": "x = 1"})) == {}
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "docs/x.md"), "content": "no"})
    assert verdict == "deny" and "scope" in reason
    entries = {e["intent"]["tool"]: e for e in ledger(daemon, ws)}
    edited = entries["replace_in_file"]
    assert edited["receipt"]["result"] == "success" and edited["approved_by"] == "person"
    assert edited["receipt"]["checkpoint_id"] and edited["intent"]["agent"] == "claude-code"
    assert edited["intent"]["intent_id"] == "INT-1"
    assert entries["read_file"]["receipt"]["result"] == "success"


def test_the_intent_survives_a_lost_keeper(hook: Hook, ws: Path, daemon: DaemonProcess,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws)
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"})[0] == "allow"
    state = StateFile("claude-code", SESSION).read()
    assert state.intent_id == "INT-1" and state.keeper_pid
    kill_keeper(daemon)
    # a new keeper opens a new session and selects the intent again: the gate is satisfied
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "docs/x.md"), "content": "no"})
    assert verdict == "deny" and "scope" in reason, reason
    assert StateFile("claude-code", SESSION).read().session_id != state.session_id


def test_a_new_keeper_that_cannot_select_the_intent_again_says_so(
        hook: Hook, ws: Path, daemon: DaemonProcess) -> None:
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"})[0] == "allow"
    write_intents(ws, make_intent("INT-1", status="COMPLETED"), make_intent("INT-2"))
    deadline = time.monotonic() + 10
    with Client(daemon.socket_path) as client:  # the daemon has seen the edit
        while time.monotonic() < deadline and "INT-2" not in str(
                client.call(protocol.INTENTS_LIST, {"workspace": str(ws)})):
            time.sleep(0.05)
    kill_keeper(daemon)
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "src/new.py"), "content": "y"})
    assert verdict == "deny" and GATE_MESSAGE in reason
    assert "could not select intent INT-1 again" in reason and "COMPLETED" in reason, reason
    assert StateFile("claude-code", SESSION).read().intent_id is None


def test_another_servers_select_tool_is_gated_not_a_selection(hook: Hook, ws: Path) -> None:
    verdict, reason = hook.pre("mcp__github__select_active_intent", {"intent_id": "INT-1"})
    assert verdict == "deny" and GATE_MESSAGE in reason
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "src/new.py"), "content": "y"})
    assert verdict == "deny" and GATE_MESSAGE in reason, "no intent was selected"


def test_daemon_down_denies_destructive_calls_and_asks_for_reads(
        ws: Path, short_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(short_dir / "nobody.sock", ws, monkeypatch, capsys)
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "src/a.py"), "content": "x"})
    assert verdict == "deny" and "no intentd daemon" in reason
    assert hook.pre("Bash", {"command": "ls"})[0] == "deny"
    assert hook.pre("mcp__github__delete_repo", {"repo": "x"})[0] == "deny"
    assert hook.pre("Read", {"file_path": str(ws / "README.md")})[0] == "ask"
    assert hook(event("PreToolUse", "TodoWrite", {"todos": []}, ws)) == {}


def test_broken_input_fails_closed(monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{not json")))
    assert main(["hook", "claude-code"]) == 0
    out = json.loads(capsys.readouterr().out)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"


def test_the_command_claude_code_runs(ws: Path, daemon: DaemonProcess) -> None:
    """The real command line, as settings.json runs it: one JSON answer on stdout, exit 0."""
    payload = event("PreToolUse", "Read", {"file_path": str(ws / "README.md")}, ws)
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(ws)}
    done = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "hook", "claude-code",
                           "--socket", str(daemon.socket_path)], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "allow"
    select = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "hook", "select", "INT-1"],
                            capture_output=True, text=True, timeout=60, cwd=ws / "src")
    assert select.returncode == 0 and "<intent_context>" in select.stdout


def test_session_start_teaches_the_handshake_and_session_end_forgets(
        hook: Hook, ws: Path) -> None:
    started = hook({"session_id": SESSION, "hook_event_name": "SessionStart", "cwd": str(ws),
                    "source": "startup", "transcript_path": "/tmp/t.jsonl"})
    context = started["hookSpecificOutput"]["additionalContext"]
    assert "intentd hook select <INTENT_ID>" in context and "INT-1" in context
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"})[0] == "allow"
    assert StateFile("claude-code", SESSION).path.exists()
    assert hook({"session_id": SESSION, "hook_event_name": "SessionEnd", "cwd": str(ws),
                 "reason": "exit", "transcript_path": "/tmp/t.jsonl"}) == {}
    assert not StateFile("claude-code", SESSION).path.exists()


def test_selecting_through_the_intentd_mcp_server_counts_for_the_hook(hook: Hook, ws: Path) -> None:
    verdict, reason = hook.pre("mcp__intentd__select_active_intent", {"intent_id": "NOPE"})
    assert verdict == "deny" and "one of: INT-1" in reason
    assert hook.pre("mcp__intentd__select_active_intent", {"intent_id": "INT-1"})[0] == "allow"
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "docs/x.md"), "content": "x"})
    assert verdict == "deny" and "scope" in reason
    # the intentd MCP server gates its own tools: the hook does not ask a second time
    assert hook(event("PreToolUse", "mcp__intentd__write_to_file", {"path": "src/a.py"}, ws)) == {}


def test_an_approver_who_does_not_answer_is_a_denial_before_claude_code_gives_up(
        ws: Path, daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(daemon.socket_path, ws, monkeypatch, capsys)
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"})[0] == "allow"
    away = Client(daemon.socket_path).connect()  # an app left open, with nobody at it
    away.initialize("intentd-gui away")
    away.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    payload = event("PreToolUse", "Write", {"file_path": str(ws / "src/n.py"), "content": "n"}, ws)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    capsys.readouterr()
    assert main(["hook", "claude-code", "--socket", str(daemon.socket_path),
                 "--approval-timeout", "0.3"]) == 0
    away.close()
    out = json.loads(capsys.readouterr().out)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "no person answered" in out["permissionDecisionReason"]


def test_with_no_approver_claude_codes_own_prompt_asks_and_the_yes_is_recorded(
        hook: Hook, ws: Path, daemon: DaemonProcess) -> None:
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"})[0] == "allow"
    started = time.monotonic()
    verdict, reason = hook.pre("Write", {"file_path": str(ws / "src/n.py"), "content": "n\n"},
                               use_id="toolu_ask")
    assert time.monotonic() - started < 5
    assert verdict == "ask" and "own prompt" in reason
    (ws / "src" / "n.py").write_text("n\n")  # the person said yes: Claude Code wrote it
    hook(event("PostToolUse", "Write", {"file_path": str(ws / "src/n.py"), "content": "n\n"}, ws,
               use_id="toolu_ask"))
    entry = next(e for e in ledger(daemon, ws) if e["intent"]["tool"] == "write_to_file")
    assert entry["decision"] == "allow" and entry["approved_by"] == HANDED_OFF
    assert "agent's own prompt" in entry["reason"]


def test_the_calls_of_one_prompt_wait_as_one_turn(hook: Hook, ws: Path, person: Person) -> None:
    """Claude Code 2.1 names each prompt of the person's (prompt_id): a person may approve the
    rest of that turn at once."""
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"}, "t1")[0] == "allow"
    for use_id, prompt in (("t2", "prompt-1"), ("t3", "prompt-2")):
        write = event("PreToolUse", "Bash", {"command": f"touch src/{use_id}"}, ws, use_id=use_id)
        answer = hook({**write, "prompt_id": prompt})
        assert answer["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert [a["batch"] for a in person.seen] == ["prompt-1", "prompt-2"]


def test_read_write_edit_and_shell_before_and_after_selecting(hook: Hook, ws: Path,
                                                              person: Person) -> None:
    app = str(ws / "src" / "app.py")
    edit = {"file_path": app, "old_string": "x = 1", "new_string": "x = 3"}
    before = {"read": hook.pre("Read", {"file_path": app}, "t1")[0],
              "shell (read-only)": hook.pre("Bash", {"command": "ls src"}, "t2")[0],
              "write": hook.pre("Write", {"file_path": str(ws / "src/n.py"), "content": "n"},
                                "t3")[0],
              "edit": hook.pre("Edit", edit, "t4")[0],
              "shell": hook.pre("Bash", {"command": "touch src/t.py"}, "t5")[0]}
    assert before == {"read": "allow", "shell (read-only)": "allow", "write": "deny",
                      "edit": "deny", "shell": "deny"}
    assert person.seen == []  # the gate refused them: no person was asked
    assert hook.pre("Bash", {"command": "intentd hook select INT-1"}, "t6")[0] == "allow"
    after = {"write": hook.pre("Write", {"file_path": str(ws / "src/n.py"), "content": "n"},
                               "t7")[0],
             "edit": hook.pre("Edit", edit, "t8")[0],
             "shell": hook.pre("Bash", {"command": "touch src/t.py"}, "t9")[0]}
    assert after == {"write": "allow", "edit": "allow", "shell": "allow"}
    assert [a["tool"] for a in person.seen] == ["write_to_file", "replace_in_file",
                                                "execute_command"]


def test_an_agent_started_in_a_sub_folder_works_in_the_projects_workspace(
        daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Claude Code started in src/ names src/ as its project: the session is the workspace's
    above it (whose ignore rules hold), as the daemon opens none on a workspace's sub-folder."""
    (ws / ".orchestration" / "ignore").write_text("src/secret.txt\n")
    (ws / "src" / "secret.txt").write_text("KEY\n")
    hook = Hook(daemon.socket_path, ws / "src", monkeypatch, capsys)
    assert hook.pre("Read", {"file_path": str(ws / "src" / "app.py")})[0] == "allow"
    verdict, reason = hook.pre("Read", {"file_path": str(ws / "src" / "secret.txt")})
    assert verdict == "deny" and "ignored" in reason
    with Client(daemon.socket_path) as client:
        sessions = client.call(protocol.SESSIONS_LIST)["sessions"]
    assert [s["workspace"] for s in sessions] == [str(ws)]
