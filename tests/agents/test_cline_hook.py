"""`intentd hook cline` fed the payloads Cline sends (cline_fixtures/), against a real daemon.

`cli/` are what Cline CLI 3.0.65 sent; `docs/` are the examples of Cline's hooks documentation.
A refusal in Cline is `{"cancel": true, "errorMessage": ...}`; anything else lets the call run.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.cline import ADAPTER
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.conftest import Person

FIXTURES = Path(__file__).parent / "cline_fixtures"
SHOWN = {"cli": "/home/me/proj", "docs": "/path/to/project"}  # replaced by the test's workspace
SELECT = "intentd hook select INT-1"


def fixture(name: str, ws: Path, **given: Any) -> dict[str, Any]:
    """A payload (`cli/NAME` or `docs/NAME`) in this test's workspace; `given` replaces tool
    input fields, in the SDK's `tool_call.input` and in the string `parameters` alike."""
    folder = name.split("/")[0]
    payload: dict[str, Any] = json.loads(
        (FIXTURES / f"{name}.json").read_text().replace(SHOWN[folder], str(ws)))
    for key, value in given.items():
        if isinstance(payload.get("tool_call"), dict):
            payload["tool_call"]["input"][key] = value
        block = payload.get("preToolUse") or payload.get("postToolUse")
        block["parameters"][key] = value if isinstance(value, str) else json.dumps(value)
    return payload


def in_session(payload: dict[str, Any], session: str) -> dict[str, Any]:
    """The payload as one of `session`'s (the CLI's and the docs' payloads name their own)."""
    if isinstance(payload.get("sessionContext"), dict):
        payload["sessionContext"]["rootSessionId"] = session
    payload["taskId"] = session
    return payload


def with_id(payload: dict[str, Any], call_id: str) -> dict[str, Any]:
    for key in ("tool_call", "tool_result"):
        if isinstance(payload.get(key), dict):
            payload[key]["id"] = call_id
    return payload


class Answer:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err
        self.json: dict[str, Any] = json.loads(out)  # always exactly one JSON object

    @property
    def cancelled(self) -> str | None:
        """The reason when Cline stops the call (and its task), else None."""
        if self.json.get("cancel") is True:
            return str(self.json.get("errorMessage"))
        return None

    @property
    def goes_on(self) -> bool:
        return self.code == 0 and self.json.get("cancel") is False

    @property
    def context(self) -> str:
        return str(self.json.get("contextModification") or "")


class Hook:
    """Runs `intentd hook cline EVENT` in-process as Cline runs the hook file: JSON in, JSON out."""

    def __init__(self, socket_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> None:
        self.socket_path, self.ws = socket_path, ws
        self.monkeypatch, self.capsys = monkeypatch, capsys
        monkeypatch.chdir(ws)  # Cline runs a hook in the folder it runs its tools in

    def raw(self, data: bytes, event: str) -> Answer:
        self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        self.capsys.readouterr()
        code = main(["hook", "cline", event, "--socket", str(self.socket_path)])
        captured = self.capsys.readouterr()
        assert code == 0  # Cline ignores exit codes: the JSON is the answer
        return Answer(code, captured.out, captured.err)

    def __call__(self, payload: dict[str, Any]) -> Answer:
        event = "PostToolUse" if "postToolUse" in payload else (
            "PreToolUse" if "preToolUse" in payload else "TaskStart")
        return self.raw(json.dumps(payload).encode(), event)

    def call(self, name: str, call_id: str = "call_1", **given: Any) -> Answer:
        return self(in_session(with_id(fixture(name, self.ws, **given), call_id), "task-1"))

    def select(self, call_id: str = "call_s") -> Answer:
        return self.call("cli/PreToolUse-run_commands", call_id, commands=[SELECT])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", files={"src/app.py": "x = 1\n",
                                                    "hello.txt": "hello\nworld\n",
                                                    "package.json": "{}\n"})


@pytest.fixture
def hook(daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Hook:
    return Hook(daemon.socket_path, ws, monkeypatch, capsys)


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def test_every_fixture_is_read_as_cline_sent_it(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws)
    seen = {}
    for path in sorted(FIXTURES.glob("*/*.json")):
        name = f"{path.parent.name}/{path.stem}"
        payload = fixture(name, ws)
        event = ADAPTER.event(None, payload)
        seen[name] = (event.kind, event.tool_name)
        assert event.workspace == str(ws) and event.cwd == str(ws)
        assert event.session_key == (payload.get("sessionContext") or {}).get(
            "rootSessionId", payload["taskId"])
    assert seen == {
        "cli/PostToolUse-apply_patch": ("post_tool", "apply_patch"),
        "cli/PostToolUse-editor_create": ("post_tool", "editor"),
        "cli/PostToolUse-editor_insert": ("post_tool", "editor"),
        "cli/PostToolUse-editor_replace": ("post_tool", "editor"),
        "cli/PostToolUse-read_files": ("post_tool", "read_files"),
        "cli/PostToolUse-run_commands": ("post_tool", "run_commands"),
        "cli/PostToolUse-search_codebase": ("post_tool", "search_codebase"),
        "cli/PreToolUse-apply_patch": ("pre_tool", "apply_patch"),
        "cli/PreToolUse-editor_create": ("pre_tool", "editor"),
        "cli/PreToolUse-editor_insert": ("pre_tool", "editor"),
        "cli/PreToolUse-editor_replace": ("pre_tool", "editor"),
        "cli/PreToolUse-read_files": ("pre_tool", "read_files"),
        "cli/PreToolUse-run_commands": ("pre_tool", "run_commands"),
        "cli/PreToolUse-search_codebase": ("pre_tool", "search_codebase"),
        "cli/TaskComplete": ("other", ""),
        "cli/TaskStart": ("session_start", ""),
        "docs/PostToolUse-execute_command": ("post_tool", "execute_command"),
        "docs/PreToolUse-execute_command": ("pre_tool", "execute_command"),
        "docs/PreToolUse-read_file": ("pre_tool", "read_file"),
        "docs/PreToolUse-replace_in_file": ("pre_tool", "replace_in_file"),
        "docs/PreToolUse-write_to_file": ("pre_tool", "write_to_file"),
        "docs/TaskStart": ("session_start", "")}
    # the CLI's call ids pair PostToolUse with PreToolUse; its per-item results tell failures
    post = ADAPTER.event(None, fixture("cli/PostToolUse-run_commands", ws))
    assert post.call_key == "call_5" and post.ok and "hello.txt" in post.output
    failed = fixture("cli/PostToolUse-run_commands", ws)
    failed["tool_result"]["output"][1]["success"] = False
    assert not ADAPTER.event(None, failed).ok
    documented = ADAPTER.event(None, fixture("docs/PostToolUse-execute_command", ws))
    assert documented.ok and documented.output == "All tests passed"
    # a file Cline ran for another event than the payload names is not trusted
    with pytest.raises(ValueError, match="PostToolUse hook was sent a tool_call"):
        ADAPTER.event("PostToolUse", fixture("cli/PreToolUse-editor_create", ws))
    # an event name this adapter does not know is taken from the file Cline ran
    renamed = {**fixture("cli/PreToolUse-editor_create", ws), "hookName": "before_tool"}
    assert ADAPTER.event("PreToolUse", renamed).kind == "pre_tool"


def mapped(name: str, ws: Path, **given: Any) -> tuple[str | None, dict[str, Any], int]:
    event = ADAPTER.event(None, fixture(name, ws, **given))
    result = ADAPTER.map_tool(event.tool_name, event.tool_input, None)
    return result.tool, result.args, len(result.more)


def test_cline_tools_map_onto_the_pipeline(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws)
    hello = str(ws / "hello.txt")
    assert mapped("cli/PreToolUse-read_files", ws) == ("read_file", {"path": hello}, 0)
    assert mapped("cli/PreToolUse-editor_create", ws) == (
        "write_to_file", {"path": str(ws / "new.txt"), "content": "brand new\n"}, 0)
    assert mapped("cli/PreToolUse-editor_replace", ws) == (
        "replace_in_file", {"path": hello, "old_str": "world", "new_str": "there"}, 0)
    # what Cline's editor writes: new_text split into lines, its final newline one more line
    assert mapped("cli/PreToolUse-editor_insert", ws) == (
        "write_to_file", {"path": hello, "content": "top\n\nhello\nworld\n"}, 0)
    two = ADAPTER.map_tool("run_commands", {"commands": ["echo hi > out.txt", "ls"]}, None)
    assert (two.tool, two.args, [m.args for m in two.more]) == (
        "execute_command", {"command": "echo hi > out.txt"}, [{"command": "ls"}])
    assert mapped("cli/PreToolUse-search_codebase", ws)[:2] == (
        "execute_command", {"command": "rg --file - -- . <<< hello"})
    assert mapped("cli/PreToolUse-apply_patch", ws) == (
        "write_to_file", {"path": "patched.txt", "content": "patched\n"}, 0)
    # the documented (older extension's) tools, parameters as strings
    assert mapped("docs/PreToolUse-read_file", ws) == ("read_file", {"path": "package.json"}, 0)
    assert mapped("docs/PreToolUse-write_to_file", ws) == (
        "write_to_file", {"path": "src/config.ts", "content": "..."}, 0)
    assert mapped("docs/PreToolUse-execute_command", ws) == (
        "execute_command", {"command": "npm test"}, 0)
    assert mapped("docs/PreToolUse-replace_in_file", ws) == (
        "replace_in_file", {"path": "src/config.ts", "old_str": "export const port = 3000",
                            "new_str": "export const port = 8080"}, 0)
    # every input form Cline's own schemas accept
    for form in ("ls", ["ls"], {"command": "ls"}, {"cmd": "ls"}, {"commands": "ls"},
                 {"commands": [{"command": "ls"}]}):
        assert ADAPTER.map_tool("run_commands", form, None).args == {"command": "ls"}, form
    structured = ADAPTER.map_tool("run_commands", {"command": "rm", "args": ["-rf", "a b"]}, None)
    assert structured.args == {"command": "rm -rf 'a b'"}
    for form in ("a", ["a"], {"path": "a"}, {"files": "a"}, {"files": [{"path": "a"}]},
                 {"paths": ["a"]}, {"file_paths": "a"}, [{"file_path": "a"}]):
        assert ADAPTER.map_tool("read_files", form, None).args == {"path": "a"}, form
    # the selection, alone in its call; MCP tools as the SDK names them; neutral and unknown
    assert ADAPTER.map_tool("run_commands", {"commands": [SELECT]}, None).select == "INT-1"
    assert ADAPTER.map_tool("execute_command", {"command": SELECT}, None).select == "INT-1"
    with pytest.raises(ValueError, match="only command"):
        ADAPTER.map_tool("run_commands", {"commands": [SELECT, "rm -rf src"]}, None)
    assert ADAPTER.map_tool("intentd__select_active_intent", {"intent_id": "INT-1"},
                            None).select == "INT-1"
    assert ADAPTER.map_tool("github__create_issue", {"title": "x"}, None).tool == \
        "mcp__github__create_issue"
    assert ADAPTER.map_tool("use_mcp_tool", {"server_name": "github", "tool_name": "create_issue",
                                             "arguments": '{"title": "x"}'}, None).args == \
        {"title": "x"}
    for neutral in ("ask_question", "submit_and_exit", "spawn_agent", "attempt_completion"):
        assert ADAPTER.map_tool(neutral, {}, None).tool is None
    for unknown in ("fetch_web_content", "team_run_task", "browser_action", "some_new_tool"):
        assert ADAPTER.map_tool(unknown, {}, None).tool == f"mcp__cline__{unknown}"
    split = ADAPTER.map_tool("run_commands", {"commands": ["cat > f <<EOF", "x\nEOF"]}, None)
    assert split.more[-1].args == {"command": "cat > f <<EOF\nx\nEOF"}  # as Cline rejoins it
    for bad in ({"commands": [1]}, {"nothing": "here"}, 7):
        with pytest.raises(ValueError):
            ADAPTER.map_tool("run_commands", bad, None)


def test_the_handshake_comes_again_after_the_gate_stopped_a_task(hook: Hook) -> None:
    assert "intentd hook select" in hook.call("cli/PreToolUse-read_files").context
    assert hook.call("cli/PreToolUse-editor_create").cancelled is not None  # the task stops
    assert "intentd hook select" in hook.call("cli/PreToolUse-read_files", "call_2").context
    assert hook.call("cli/PreToolUse-read_files", "call_3").context == ""
    # a tool intentd has no say on carries it too, and the TaskStart answer has it for Cline
    # versions that read it
    started = hook(in_session(fixture("cli/TaskStart", hook.ws), "task-2"))
    assert started.goes_on and "intentd hook select <INTENT_ID>" in started.context
    neutral = in_session(fixture("cli/PreToolUse-read_files", hook.ws), "task-3")
    neutral["tool_call"]["name"] = neutral["preToolUse"]["toolName"] = "ask_question"
    assert "intentd hook select" in hook(neutral).context


def test_each_cline_gets_the_deadline_its_hook_timeout_allows(ws: Path) -> None:
    assert ADAPTER.event(None, fixture("cli/PreToolUse-editor_create", ws)).hook_timeout == 120
    assert ADAPTER.event(None, fixture("docs/PreToolUse-write_to_file", ws)).hook_timeout == 30


def test_a_write_before_an_intent_is_cancelled_with_how_to_select(hook: Hook) -> None:
    for name, given in (("cli/PreToolUse-editor_create", {"path": str(hook.ws / "src/n.py")}),
                        ("docs/PreToolUse-write_to_file", {}),
                        ("cli/PreToolUse-editor_replace", {"path": str(hook.ws / "src/app.py"),
                                                           "old_text": "x = 1"}),
                        ("docs/PreToolUse-replace_in_file", {}),
                        ("cli/PreToolUse-run_commands", {}),
                        ("docs/PreToolUse-execute_command", {})):
        answer = hook.call(name, **given)
        assert answer.cancelled is not None, name
        assert GATE_MESSAGE in answer.cancelled and "intentd hook select <INTENT_ID>" in \
            answer.cancelled and "INT-1" in answer.cancelled, name
    assert not (hook.ws / "src" / "n.py").exists()


def test_reads_run_before_and_after_an_intent(hook: Hook, person: Person) -> None:
    first = hook.call("cli/PreToolUse-read_files")
    # Cline drops TaskStart's context: the handshake rides on the session's first tool call
    assert first.goes_on and "intentd hook select <INTENT_ID>" in first.context
    assert "INT-1" in first.context and "run_commands" in first.context
    again = hook.call("docs/PreToolUse-read_file")
    assert again.goes_on and again.context == ""  # once is enough
    assert hook.call("cli/PostToolUse-read_files").goes_on
    selected = hook.select()
    assert selected.goes_on and "<intent_context>" in selected.context  # the model reads it
    assert hook.call("cli/PreToolUse-read_files", "call_2").goes_on
    assert hook.call("docs/PreToolUse-read_file").goes_on
    assert person.seen == []  # reads need nobody


def test_an_edit_and_a_command_approved_by_another_client(hook: Hook, daemon: DaemonProcess,
                                                          person: Person) -> None:
    app = str(hook.ws / "src" / "app.py")
    assert hook.select().goes_on
    stale = hook.call("cli/PreToolUse-editor_replace", "call_0", path=app, old_text="x = 1",
                      new_text="x = 2")
    assert stale.cancelled is not None and "read it again" in stale.cancelled  # not read yet
    assert hook.call("cli/PreToolUse-read_files", "call_r", files=[{"path": app}]).goes_on
    edit = hook.call("cli/PreToolUse-editor_replace", "call_e", path=app, old_text="x = 1",
                     new_text="x = 2")
    assert edit.goes_on, edit.cancelled
    assert [seen["tool"] for seen in person.seen] == ["replace_in_file"]
    Path(app).write_text("x = 2\n")  # Cline edits the file itself
    assert hook.call("cli/PostToolUse-editor_replace", "call_e", path=app).goes_on
    command = hook.call("docs/PreToolUse-execute_command")
    assert command.goes_on, command.cancelled
    assert hook.call("docs/PostToolUse-execute_command").goes_on
    entries = {e["intent"]["tool"]: e for e in ledger(daemon, hook.ws)}
    replaced = entries["replace_in_file"]
    assert replaced["intent"]["agent"] == "cline" and replaced["intent"]["intent_id"] == "INT-1"
    assert replaced["approved_by"] == "person" and replaced["receipt"]["result"] == "success"
    assert entries["execute_command"]["intent"]["agent"] == "cline"
    assert entries["execute_command"]["receipt"]["result"] == "success"


def test_a_person_refusing_in_another_client_cancels(hook: Hook, daemon: DaemonProcess) -> None:
    refusing = Person(daemon.socket_path, approve=False, feedback="not that file")
    try:
        assert hook.select().goes_on
        answer = hook.call("cli/PreToolUse-editor_create", path=str(hook.ws / "src/n.py"))
    finally:
        refusing.close()
    assert answer.cancelled is not None and "not that file" in answer.cancelled


def test_writes_outside_the_intent_are_refused(hook: Hook, daemon: DaemonProcess,
                                              person: Person) -> None:
    assert hook.select().goes_on
    outside = hook.call("cli/PreToolUse-editor_create")  # new.txt at the root: not in src/**
    assert outside.cancelled is not None and "scope" in outside.cancelled
    documented = hook.call("docs/PreToolUse-write_to_file", path="docs/x.md")
    assert documented.cancelled is not None and "scope" in documented.cancelled
    # one file inside, one outside: the whole patch is refused, the first call withdrawn
    mixed = ("*** Begin Patch\n*** Add File: src/ok.py\n+ok\n*** Add File: docs/y.md\n+no\n"
             "*** End Patch\n")
    answer = hook.call("cli/PreToolUse-apply_patch", "call_m", input=mixed)
    assert answer.cancelled is not None and "docs/y.md" in answer.cancelled
    assert not (hook.ws / "new.txt").exists() and not (hook.ws / "src" / "ok.py").exists()


def test_no_daemon_cancels_every_gated_call(ws: Path, short_dir: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(short_dir / "none.sock", ws, monkeypatch, capsys)
    for path in sorted(FIXTURES.glob("*/PreToolUse-*.json")):
        answer = hook.call(f"{path.parent.name}/{path.stem}")
        assert answer.cancelled is not None, path.stem  # reads too: Cline has no prompt
        assert "intentd serve" in answer.cancelled
    assert hook.call("cli/PreToolUse-run_commands", commands=["echo hi"]).cancelled
    # input that cannot be read: refused, whichever event the file was for
    for raw in (b"{not json", b"[]", b'{"hookName": "tool_call"}'):
        assert hook.raw(raw, "PreToolUse").cancelled is not None
    assert hook.call("cli/PreToolUse-editor_create", path=7).cancelled is not None
    # a neutral tool is not blocked by intentd's trouble; a post report never blocks
    neutral = fixture("cli/PreToolUse-read_files", ws)
    neutral["tool_call"]["name"] = neutral["preToolUse"]["toolName"] = "ask_question"
    assert hook(neutral).goes_on
    assert hook.call("cli/PostToolUse-editor_create").goes_on


def test_a_hook_call_imports_nothing_heavy(daemon: DaemonProcess, ws: Path) -> None:
    from tests.agents.test_hook_imports import heavy, loaded

    argv = ["hook", "cline", "PreToolUse", "--socket", str(daemon.socket_path)]
    out, modules = loaded(argv, in_session(fixture("cli/PreToolUse-read_files", ws), "imp"), ws)
    assert json.loads(out)["cancel"] is False
    assert heavy(modules) == [] and "intentd.daemon.agents.hooks.install" not in modules


def test_a_command_that_wrote_outside_the_scope_is_undone_and_the_model_told(
        hook: Hook, person: Person) -> None:
    assert hook.select().goes_on
    sneaky = "python3 -c \"open('notes.txt', 'w').write('y')\""
    command = hook.call("cli/PreToolUse-run_commands", "call_x", commands=[sneaky])
    assert command.goes_on, command.cancelled  # a person approved it: the policy cannot see in
    (hook.ws / "notes.txt").write_text("y")  # Cline runs it
    report = hook.call("cli/PostToolUse-run_commands", "call_x", commands=[sneaky])
    assert report.goes_on and "notes.txt" in report.context
    assert not (hook.ws / "notes.txt").exists()


def test_the_documented_payloads_after_an_intent_is_selected(hook: Hook, daemon: DaemonProcess,
                                                             person: Person) -> None:
    config = hook.ws / "src" / "config.ts"
    assert hook.call("docs/PreToolUse-execute_command", command=SELECT).goes_on
    write = hook.call("docs/PreToolUse-write_to_file", content="export const port = 3000\n")
    assert write.goes_on, write.cancelled  # src/config.ts is in INT-1's scope: a person said yes
    config.write_text("export const port = 3000\n")
    assert hook.call("docs/PreToolUse-read_file", path="src/config.ts").goes_on
    edit = hook.call("docs/PreToolUse-replace_in_file")
    assert edit.goes_on, edit.cancelled
    assert hook.call("docs/PreToolUse-execute_command").goes_on
    assert [seen["tool"] for seen in person.seen] == ["write_to_file", "replace_in_file",
                                                      "execute_command"]
    assert "+export const port = 8080" in str(person.seen[1]["diff"])
