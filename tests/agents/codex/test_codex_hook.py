"""`intentd hook codex` fed the payloads Codex CLI sends (fixtures/), against a real daemon."""

from __future__ import annotations

import copy
import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.codex import ADAPTER
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.conftest import Person

FIXTURES = Path(__file__).parent / "fixtures"
SHOWN_WORKSPACE = "/home/me/proj"  # the fixtures' cwd, replaced by the test's workspace


def fixture(name: str, ws: Path, **changes: Any) -> dict[str, Any]:
    """A captured payload, in this test's workspace; `changes` replace top-level fields, and
    `command` replaces tool_input.command."""
    payload: dict[str, Any] = json.loads(
        (FIXTURES / f"{name}.json").read_text().replace(SHOWN_WORKSPACE, str(ws)))
    command = changes.pop("command", None)
    payload.update(changes)
    if command is not None:
        payload["tool_input"] = {**payload["tool_input"], "command": command}
    return payload


class Answer:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err
        self.json: dict[str, Any] = json.loads(out) if out.strip() else {}

    @property
    def denied(self) -> str | None:
        """The reason when the answer blocks the call in Codex's convention, else None."""
        if self.code == 2 and self.err.strip():
            return self.err
        output = self.json.get("hookSpecificOutput", {})
        if self.code == 0 and output.get("permissionDecision") == "deny":
            assert output["hookEventName"] == "PreToolUse"
            return str(output["permissionDecisionReason"])
        return None

    @property
    def allowed(self) -> bool:
        """Codex runs the call: exit 0, and no decision (an `allow` would be a failed hook)."""
        output = self.json.get("hookSpecificOutput", {})
        return self.code == 0 and "permissionDecision" not in output and "decision" not in self.json


class Hook:
    """Runs `intentd hook codex EVENT` in-process as Codex runs the command: JSON in, answer out."""

    def __init__(self, socket_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str], *options: str) -> None:
        self.socket_path, self.ws, self.options = socket_path, ws, options
        self.monkeypatch, self.capsys = monkeypatch, capsys
        monkeypatch.chdir(ws)  # Codex runs a hook in the session's cwd

    def raw(self, data: bytes, event: str) -> Answer:
        self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        self.capsys.readouterr()
        code = main(["hook", "codex", event, "--socket", str(self.socket_path),
                     "--hook-timeout", "30", *self.options])
        captured = self.capsys.readouterr()
        return Answer(code, captured.out, captured.err)

    def __call__(self, payload: dict[str, Any]) -> Answer:
        return self.raw(json.dumps(payload).encode(), payload["hook_event_name"])

    def pre(self, name: str, use_id: str = "call_1", **changes: Any) -> Answer:
        return self(fixture(name, self.ws, tool_use_id=use_id, **changes))

    def post(self, name: str, use_id: str = "call_1", **changes: Any) -> Answer:
        return self(fixture(name, self.ws, tool_use_id=use_id, **changes))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n", "README.md": "# r\n"})


@pytest.fixture
def hook(daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Hook:
    return Hook(daemon.socket_path, ws, monkeypatch, capsys)


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def test_every_fixture_is_read_as_codex_sent_it(ws: Path) -> None:
    kinds = {}
    for path in sorted(FIXTURES.glob("*.json")):
        payload = fixture(path.stem, ws)
        event = ADAPTER.event(None, payload)
        kinds[path.stem] = event.kind
        assert event.session_key == payload["session_id"] and event.cwd == str(ws)
    assert kinds == {
        "permission_request": "other", "post_apply_patch_add": "post_tool",
        "post_apply_patch_update": "post_tool", "post_bash_read": "post_tool",
        "post_bash_write": "post_tool", "pre_apply_patch_add": "pre_tool",
        "pre_apply_patch_update": "pre_tool", "pre_bash_read": "pre_tool",
        "pre_bash_write": "pre_tool", "pre_mcp": "pre_tool", "pre_mcp_select": "pre_tool",
        "session_start": "session_start",
        "session_end": "session_end"}
    ok = ADAPTER.event(None, fixture("post_apply_patch_update", ws))
    assert ok.ok and "Success. Updated the following files" in ok.output
    failed = fixture("post_apply_patch_update", ws, tool_response="Exit code: 1\nWall time: 0 "
                     "seconds\nOutput:\napply_patch verification failed")
    assert not ADAPTER.event(None, failed).ok


def test_codex_tools_map_onto_the_pipeline(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws)

    def mapped(name: str) -> tuple[str | None, dict[str, Any]]:
        event = ADAPTER.event(None, fixture(name, ws))
        result = ADAPTER.map_tool(event.tool_name, event.tool_input, None)
        return result.tool, result.args

    assert mapped("pre_bash_read") == ("read_file", {"path": "src/app.py"})  # seen as a read
    for command in ("cat a b > c", "sed -n 1,5p a; rm b", "cat $HOME/x", "sed -i s/a/b/ f"):
        assert ADAPTER.map_tool("Bash", {"command": command}, None).tool == "execute_command"
    two = ADAPTER.map_tool("Bash", {"command": "sed -n '1,80p' src/a.py"}, "/w")
    assert (two.tool, two.args, two.read_only) == ("read_file", {"path": "/w/src/a.py"}, True)
    assert mapped("pre_apply_patch_update") == ("write_to_file",
                                                {"path": "src/app.py", "content": "x = 2\n"})
    assert mapped("pre_apply_patch_add") == ("write_to_file",
                                             {"path": "src/added.py", "content": "z = 3\n"})
    assert mapped("pre_mcp") == ("mcp__github__create_issue",
                                 {"repo": "me/proj", "title": "Login loops"})
    heredoc = ADAPTER.map_tool("Bash", {"command": "cd src && apply_patch <<'EOF'\n*** Begin Patch"
                                        "\n*** Delete File: app.py\n*** End Patch\nEOF"}, None)
    assert (heredoc.tool, heredoc.args) == ("execute_command", {"command": "rm -- app.py",
                                                                "cwd": "src"})
    assert ADAPTER.map_tool("Bash", {"command": "intentd hook select INT-1"}, None).select == "INT-1"
    selected = ADAPTER.event(None, fixture("pre_mcp_select", ws))  # intentd's MCP server
    assert ADAPTER.map_tool(selected.tool_name, selected.tool_input, None).select == "INT-1"
    argv = ADAPTER.map_tool("shell", {"command": ["bash", "-lc", "echo hi > src/x.py"]}, None)
    assert (argv.tool, argv.args) == ("execute_command", {"command": "echo hi > src/x.py"})
    system = ADAPTER.map_tool("shell", {"command": ["/usr/bin/zsh", "-c", "ls"]}, None)
    assert system.args == {"command": "ls"}
    for planted in (["./bash", "-lc", "ls"], ["src/zsh", "-c", "git status"], ["/tmp/sh", "-c", "ls"]):
        # a shell the agent may have written runs anything: it stays the command itself
        kept = ADAPTER.map_tool("shell", {"command": planted}, None)
        assert (kept.tool, kept.args["command"]) == ("execute_command", " ".join(planted[:2]) + " "
                                                     + shlex.quote(planted[2]))
    patch = "*** Begin Patch\n*** Add File: src/n.py\n+n\n*** End Patch"
    for command in (["apply_patch", patch], ["bash", "-lc", f"apply_patch <<'EOF'\n{patch}\nEOF"]):
        direct = ADAPTER.map_tool("shell", {"command": command}, None)
        assert (direct.tool, direct.args) == ("write_to_file", {"path": "src/n.py",
                                                               "content": "n\n"})
    assert ADAPTER.map_tool("update_plan", {"plan": []}, None).tool is None
    assert ADAPTER.map_tool("write_stdin", {"session_id": 1, "chars": "rm -rf /\n"},
                            None).tool == "mcp__codex__write_stdin"  # unknown: destructive


def test_a_write_before_an_intent_is_denied_with_how_to_select(hook: Hook) -> None:
    answer = hook.pre("pre_apply_patch_add")
    assert answer.denied is not None
    assert GATE_MESSAGE in answer.denied and "intentd hook select <INTENT_ID>" in answer.denied
    assert "INT-1" in answer.denied
    assert not (hook.ws / "src" / "added.py").exists()
    shell = hook.pre("pre_bash_write", use_id="call_2")
    assert shell.denied is not None and GATE_MESSAGE in shell.denied


def test_a_read_runs_before_and_after_an_intent(hook: Hook, person: Person) -> None:
    assert hook.pre("pre_bash_read").allowed
    assert hook.post("post_bash_read").allowed
    selected = hook.pre("pre_bash_read", use_id="call_s", command="intentd hook select INT-1")
    assert selected.allowed
    assert "<intent_context>" in selected.json["hookSpecificOutput"]["additionalContext"]
    assert hook.pre("pre_bash_read", use_id="call_2").allowed
    assert person.seen == []  # a read needs nobody


def test_selected_intent_then_an_edit_and_a_command_approved_by_another_client(
        hook: Hook, daemon: DaemonProcess, person: Person) -> None:
    assert hook.pre("pre_bash_read", use_id="call_s", command="intentd hook select INT-1").allowed
    stale = hook.pre("pre_apply_patch_update", use_id="call_0")
    assert stale.denied is not None and "read it again" in stale.denied  # not read yet
    assert hook.pre("pre_bash_read", use_id="call_r").allowed  # `cat src/app.py`
    answer = hook.pre("pre_apply_patch_update", use_id="call_e")
    assert answer.allowed, answer.denied
    assert [seen["tool"] for seen in person.seen] == ["write_to_file"]
    assert "+x = 2" in str(person.seen[0]["diff"])
    (hook.ws / "src" / "app.py").write_text("x = 2\n")  # Codex applies the patch itself
    assert hook.post("post_apply_patch_update", use_id="call_e").allowed
    command = hook.pre("pre_bash_write", use_id="call_w")
    assert command.allowed, command.denied
    (hook.ws / "src" / "new.py").write_text("y = 2\n")
    assert hook.post("post_bash_write", use_id="call_w").allowed
    entries = {e["intent"]["tool"]: e for e in ledger(daemon, hook.ws)}
    edit = entries["write_to_file"]
    assert edit["intent"]["agent"] == "codex" and edit["intent"]["intent_id"] == "INT-1"
    assert edit["approved_by"] == "person" and edit["receipt"]["result"] == "success"
    assert entries["execute_command"]["intent"]["agent"] == "codex"


def test_a_person_refusing_in_another_client_denies(hook: Hook, daemon: DaemonProcess) -> None:
    refusing = Person(daemon.socket_path, approve=False, feedback="not that file")
    try:
        assert hook.pre("pre_bash_read", use_id="call_s",
                        command="intentd hook select INT-1").allowed
        assert hook.pre("pre_bash_read", use_id="call_r").allowed
        answer = hook.pre("pre_apply_patch_update", use_id="call_e")
    finally:
        refusing.close()
    assert answer.denied is not None and "not that file" in answer.denied


def test_writes_outside_the_intent_are_refused_file_by_file(hook: Hook, daemon: DaemonProcess,
                                                            person: Person) -> None:
    assert hook.pre("pre_bash_read", use_id="call_s", command="intentd hook select INT-1").allowed
    outside = "*** Begin Patch\n*** Add File: docs/x.md\n+no\n*** End Patch\n"
    answer = hook.pre("pre_apply_patch_add", use_id="call_o", command=outside)
    assert answer.denied is not None and "scope" in answer.denied
    # one file inside, one outside: the whole patch is refused, the first call is withdrawn
    mixed = ("*** Begin Patch\n*** Add File: src/ok.py\n+ok\n*** Add File: docs/y.md\n+no\n"
             "*** End Patch\n")
    answer = hook.pre("pre_apply_patch_add", use_id="call_m", command=mixed)
    assert answer.denied is not None and "docs/y.md" in answer.denied
    assert [seen["args"]["path"] for seen in person.seen] == ["src/ok.py"]
    entries = [e for e in ledger(daemon, hook.ws) if e["intent"]["tool"] == "write_to_file"]
    assert {e["intent"]["args"]["path"]: e["decision"] for e in entries}["docs/x.md"] != "allow"


def test_a_patch_that_cannot_be_parsed_is_denied(hook: Hook) -> None:
    for bad in ("*** Begin Patch\n*** Add File: src/x.py\n+x\n",            # no end marker
                "*** Begin Patch\n*** Update File: src/app.py\n@@\n-nope\n+y\n*** End Patch\n",
                "echo hi && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n"
                "*** End Patch\nEOF"):
        name = "pre_bash_write" if bad.startswith("echo") else "pre_apply_patch_add"
        answer = hook.pre(name, command=bad)
        assert answer.denied is not None and "apply_patch" in answer.denied


def test_no_daemon_blocks_in_codex_convention(ws: Path, short_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(short_dir / "none.sock", ws, monkeypatch, capsys)
    for name in ("pre_apply_patch_add", "pre_bash_write", "pre_bash_read"):
        answer = hook.pre(name)
        assert answer.denied is not None, name  # Codex has no prompt a read could go to
        assert "intentd serve" in answer.denied
    assert hook.pre("pre_mcp").denied is not None
    # input that cannot be read: exit 2 with the reason, whichever event it was
    garbage = hook.raw(b"{not json", "PreToolUse")
    assert garbage.code == 2 and "not JSON" in garbage.err
    wrong = hook(copy.deepcopy({**fixture("pre_bash_write", ws), "tool_input": "rm -rf /"}))
    assert wrong.denied is not None


def test_permission_request_is_left_to_codex_and_session_start_teaches_the_handshake(
        hook: Hook) -> None:
    asked = hook(fixture("permission_request", hook.ws))
    assert asked.code == 0 and asked.out == ""  # Codex's own prompt asks the person
    started = hook(fixture("session_start", hook.ws))
    context = started.json["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert "intentd hook select <INTENT_ID>" in context["additionalContext"]
    assert "INT-1" in context["additionalContext"]


def test_a_codex_hook_call_imports_nothing_heavy(daemon: DaemonProcess, ws: Path) -> None:
    from tests.agents.test_hook_imports import heavy, loaded

    argv = ["hook", "codex", "PreToolUse", "--socket", str(daemon.socket_path)]
    out, modules = loaded(argv, fixture("pre_apply_patch_update", ws), ws)
    assert "permissionDecision" in out  # the gate's refusal: no intent yet
    assert heavy(modules) == []
    assert "intentd.daemon.agents.hooks.codex_install" not in modules


def test_session_end_lets_the_sessions_keeper_go(hook: Hook) -> None:
    from intentd.daemon.agents.hooks.state import StateFile

    payload = fixture("pre_bash_read", hook.ws)
    assert hook(payload).allowed
    state = StateFile("codex", payload["session_id"])
    assert state.read().session_id is not None  # a keeper holds the daemon session
    assert hook(fixture("session_end", hook.ws)).code == 0
    assert not state.path.exists()


def test_a_command_run_in_a_sub_folder_keeps_the_sessions_workspace(hook: Hook) -> None:
    from intentd.daemon.agents.hooks.state import StateFile

    # `exec_command` with `workdir`: Codex's payload then has that folder as its cwd
    payload = fixture("pre_bash_write", hook.ws, cwd=str(hook.ws / "src"), command="echo y > b.py")
    answer = hook(payload)
    assert answer.denied is not None and GATE_MESSAGE in answer.denied
    assert StateFile("codex", payload["session_id"]).read().workspace == str(hook.ws)


def test_selecting_through_intentds_mcp_server_selects_for_the_hooks_too(
        hook: Hook, person: Person) -> None:
    assert hook.pre("pre_mcp_select", use_id="call_s").allowed
    assert hook.pre("pre_bash_read", use_id="call_r").allowed
    answer = hook.pre("pre_apply_patch_update", use_id="call_e")
    assert answer.allowed, answer.denied  # not refused by the intent gate any more


def test_with_nobody_to_approve_a_write_waits_then_is_refused(
        daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import time

    hook = Hook(daemon.socket_path, ws, monkeypatch, capsys, "--approval-timeout", "2")
    assert hook.pre("pre_bash_read", use_id="call_s", command="intentd hook select INT-1").allowed
    assert hook.pre("pre_bash_read", use_id="call_r").allowed
    started = time.monotonic()
    answer = hook.pre("pre_apply_patch_update", use_id="call_e")
    waited = time.monotonic() - started
    assert answer.denied is not None, answer.out
    assert 2 <= waited < 15  # it waited in the queue for the approval timeout, then stopped
    assert "no person answered within 2 s" in answer.denied
