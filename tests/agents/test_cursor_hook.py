"""`intentd hook cursor` fed Cursor's documented hook inputs, against a real daemon."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.engine.engine import HANDED_OFF
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents import cursor_payloads as cursor
from tests.agents.conftest import Person
from tests.agents.hook_runner import HookRunner
from tests.sandbox.conftest import git_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", files={"src/app.py": "x = 1\n", "README.md": "# r\n"})


@pytest.fixture
def hook(daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> HookRunner:
    return HookRunner("cursor", daemon.socket_path, monkeypatch, capsys)


def permission(hook: HookRunner, payload: dict[str, Any]) -> tuple[str, str]:
    answer = hook(payload)
    assert answer.code == 0, answer.err
    return answer.out["permission"], str(answer.out.get("user_message", ""))


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def select(hook: HookRunner, ws: Path) -> None:
    assert permission(hook, cursor.before_shell(ws, "intentd hook select INT-1"))[0] == "allow"


def test_a_write_before_an_intent_is_denied_with_how_to_select(hook: HookRunner, ws: Path) -> None:
    payload = cursor.pre_tool_use(ws, "Write", {"file_path": str(ws / "src/n.py"), "contents": "y"})
    answer = hook(payload)
    assert answer.code == 0 and answer.out["permission"] == "deny"
    assert GATE_MESSAGE in answer.out["agent_message"]
    assert "intentd hook select <INTENT_ID>" in answer.out["user_message"]


def test_session_start_teaches_the_handshake(hook: HookRunner, ws: Path) -> None:
    context = hook(cursor.session_start(ws)).out["additional_context"]
    assert "intentd hook select <INTENT_ID>" in context and "INT-1" in context
    assert hook(cursor.session_end(ws)).out == {}


def test_read_edit_and_shell_after_selecting_with_reports_in_the_ledger(
        hook: HookRunner, ws: Path, daemon: DaemonProcess, person: Person) -> None:
    select(hook, ws)
    app = ws / "src" / "app.py"
    assert permission(hook, cursor.before_read(ws, app, "x = 1\n"))[0] == "allow"
    edit = {"file_path": str(app), "old_string": "x = 1", "new_string": "x = 2"}
    verdict, _ = permission(hook, cursor.pre_tool_use(ws, "StrReplace", edit, "toolu_e"))
    assert verdict == "allow"
    assert [a["tool"] for a in person.seen] == ["replace_in_file"]
    app.write_text("x = 2\n")  # Cursor makes the edit itself
    assert hook(cursor.after_edit(ws, app, "x = 1", "x = 2")).out == {}
    # the same edit's postToolUse finds it reported already
    assert hook(cursor.post_tool_use(ws, "StrReplace", edit, "ok", "toolu_e")).out == {}
    assert permission(hook, cursor.before_shell(ws, "ls src"))[0] == "allow"
    assert hook(cursor.after_shell(ws, "ls src", "app.py\n")).out == {}
    verdict, reason = permission(hook, cursor.pre_tool_use(
        ws, "Write", {"file_path": str(ws / "docs/x.md"), "contents": "no"}, "toolu_w"))
    assert verdict == "deny" and "scope" in reason
    entries = {e["intent"]["tool"]: e for e in ledger(daemon, ws)}
    edited = entries["replace_in_file"]
    assert edited["intent"]["agent"] == "cursor" and edited["intent"]["intent_id"] == "INT-1"
    assert edited["approved_by"] == "person" and edited["receipt"]["result"] == "success"
    assert entries["read_file"]["receipt"]["result"] == "success"
    assert entries["execute_command"]["receipt"]["result"] == "success"


def test_pre_tool_use_leaves_shell_reads_and_mcp_to_their_own_hooks(hook: HookRunner,
                                                                    ws: Path) -> None:
    shell = cursor.pre_tool_use(ws, "Shell", {"command": "rm -rf src", "working_directory": str(ws)})
    assert hook(shell).out == {}
    assert hook(cursor.pre_tool_use(ws, "Read", {"file_path": str(ws / "README.md")})).out == {}
    assert hook(cursor.pre_tool_use(ws, "MCP:create_issue", {"title": "t"})).out == {}
    # ... and those hooks gate them
    assert permission(hook, cursor.before_shell(ws, "rm -rf src"))[0] == "deny"


def test_a_shell_commands_post_tool_use_reports_it_and_tells_what_the_audit_undid(
        hook: HookRunner, tmp_path: Path, daemon: DaemonProcess) -> None:
    """postToolUse may come before afterShellExecution: the first of the two reports the
    command; postToolUse's answer is the one Cursor reads, a call it does not know answers {}."""
    ws = git_workspace(tmp_path / "git-ws", ["src/**"], {"auto_approve": {"all_commands": True}})
    select(hook, ws)
    assert permission(hook, cursor.before_shell(ws, "make"))[0] == "allow"
    (ws / "docs" / "stray.md").write_text("outside the scope\n")  # what `make` did
    elsewhere = {"command": "make", "working_directory": str(ws / "src")}
    assert hook(cursor.post_tool_use(ws, "Shell", elsewhere, "done")).out == {}
    told = hook(cursor.post_tool_use(ws, "Shell", {"command": "make", "working_directory":
                                                   str(ws)}, "done")).out
    assert "undone: docs/stray.md (created; removed" in told["additional_context"]
    assert not (ws / "docs" / "stray.md").exists()
    assert hook(cursor.after_shell(ws, "make", "done")).out == {}  # reported once
    commands = [e for e in ledger(daemon, ws) if e["intent"]["tool"] == "execute_command"
                and e["intent"]["args"]["command"] == "make"]
    assert len(commands) == 1
    assert commands[0]["receipt"]["data"]["scope_audit"]["undone"] == ["docs/stray.md"]


def test_mcp_tools_are_gated_and_the_intentd_servers_select_selects(hook: HookRunner,
                                                                    ws: Path) -> None:
    other = cursor.before_mcp(ws, "create_issue", '{"title": "t"}', "npx github-mcp-server")
    verdict, reason = permission(hook, other)
    assert verdict == "deny" and GATE_MESSAGE in reason
    own = cursor.before_mcp(ws, "select_active_intent", '{"intent_id": "INT-1"}',
                            "intentd mcp --workspace /w")
    assert permission(hook, own)[0] == "allow"
    write = {"file_path": str(ws / "docs/x.md"), "contents": "no"}
    verdict, reason = permission(hook, cursor.pre_tool_use(ws, "Write", write))
    assert verdict == "deny" and "scope" in reason  # the intent was selected


def test_the_calls_of_one_cursor_generation_wait_as_one_turn(
        hook: HookRunner, ws: Path, person: Person) -> None:
    """Cursor's generation_id changes with every user message: a person may approve the rest
    of that turn at once."""
    select(hook, ws)
    first = cursor.before_shell(ws, "touch src/a.py")
    assert permission(hook, first)[0] == "allow"
    later = {**cursor.before_shell(ws, "touch src/b.py"), "generation_id": "next-message"}
    assert permission(hook, later)[0] == "allow"
    assert [a["batch"] for a in person.seen] == [first["generation_id"], "next-message"]


def test_with_no_approver_a_command_goes_to_cursors_own_prompt(
        hook: HookRunner, ws: Path, daemon: DaemonProcess) -> None:
    select(hook, ws)
    started = time.monotonic()
    verdict, reason = permission(hook, cursor.before_shell(ws, "touch src/n.py"))
    assert time.monotonic() - started < 5
    assert verdict == "ask" and "own prompt" in reason
    (ws / "src" / "n.py").write_text("")  # the person said yes in Cursor
    hook(cursor.after_shell(ws, "touch src/n.py", ""))
    entry = next(e for e in ledger(daemon, ws) if e["intent"]["tool"] == "execute_command")
    assert entry["approved_by"] == HANDED_OFF


def test_a_write_nobody_answers_is_denied(ws: Path, daemon: DaemonProcess,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """preToolUse has no prompt of Cursor's to hand the call to: it waits for intentd's."""
    hook = HookRunner("cursor", daemon.socket_path, monkeypatch, capsys,
                      "--approval-timeout", "0.5")
    select(hook, ws)
    write = {"file_path": str(ws / "src/n.py"), "contents": "n"}
    verdict, reason = permission(hook, cursor.pre_tool_use(ws, "Write", write))
    assert verdict == "deny" and "no person answered" in reason


def test_an_approval_answered_from_another_client_lets_the_write_through(
        hook: HookRunner, ws: Path, daemon: DaemonProcess, person: Person) -> None:
    select(hook, ws)
    write = {"file_path": str(ws / "src/n.py"), "contents": "n\n"}
    assert permission(hook, cursor.pre_tool_use(ws, "Write", write, "toolu_n"))[0] == "allow"
    assert [(a["tool"], a["agent"]) for a in person.seen] == [("write_to_file", "cursor")]
    assert (ws / "src").is_dir()  # Cursor then writes it; the ledger waits for the report


def test_no_daemon_blocks_in_cursors_convention(ws: Path, short_dir: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    hook = HookRunner("cursor", short_dir / "nobody.sock", monkeypatch, capsys)
    write = {"file_path": str(ws / "src/a.py"), "contents": "x"}
    verdict, reason = permission(hook, cursor.pre_tool_use(ws, "Write", write))
    assert verdict == "deny" and "no intentd daemon" in reason
    assert permission(hook, cursor.before_shell(ws, "ls"))[0] == "deny"
    assert permission(hook, cursor.before_read(ws, ws / "README.md", "# r\n"))[0] == "deny"
    broken = hook(b"{not json")
    assert broken.code == 2 and broken.out["permission"] == "deny" and broken.err


def test_the_event_the_command_was_installed_for_decides(hook: HookRunner, ws: Path) -> None:
    """An input without its event name, or with another, is still judged by the gate it was
    sent to: never waved through as an event intentd does not know."""
    payload = cursor.before_shell(ws, "rm -rf src")
    del payload["hook_event_name"]
    assert hook(payload, "beforeShellExecution").out["permission"] == "deny"
    renamed = {**cursor.before_shell(ws, "rm -rf src"), "hook_event_name": "afterFileEdit"}
    assert hook(renamed, "beforeShellExecution").out["permission"] == "deny"


def test_edit_and_commands_before_selecting_are_refused_reads_are_not(
        hook: HookRunner, ws: Path, person: Person) -> None:
    app = ws / "src" / "app.py"
    edit = {"file_path": str(app), "old_string": "x = 1", "new_string": "x = 3"}
    assert permission(hook, cursor.before_read(ws, app, "x = 1\n"))[0] == "allow"
    assert permission(hook, cursor.before_shell(ws, "ls src"))[0] == "allow"
    assert permission(hook, cursor.pre_tool_use(ws, "StrReplace", edit, "t1"))[0] == "deny"
    assert permission(hook, cursor.before_shell(ws, "touch src/t.py"))[0] == "deny"
    assert person.seen == []
    select(hook, ws)
    assert permission(hook, cursor.before_shell(ws, "touch src/t.py"))[0] == "allow"
    assert [a["tool"] for a in person.seen] == ["execute_command"]
