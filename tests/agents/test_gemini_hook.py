"""`intentd hook gemini` fed the payloads Gemini CLI sends (gemini_fixtures/), against a real
daemon: captured from Gemini CLI 0.61.0, and the samples and field lists of its docs."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.gemini import ADAPTER, unbracketed
from intentd.daemon.cli import main
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.conftest import Person, SilentDaemon

FIXTURES = Path(__file__).parent / "gemini_fixtures"
SHOWN_WORKSPACE = "/home/me/proj"  # the fixtures' cwd, replaced by the test's workspace
APP = "def greet():\n    return 'hello'\n"


def captured(ws: Path) -> list[dict[str, Any]]:
    text = (FIXTURES / "captured_0.61.0.json").read_text().replace(SHOWN_WORKSPACE, str(ws))
    events: list[dict[str, Any]] = json.loads(text)["events"]
    return events


def documented(name: str, ws: Path) -> dict[str, Any]:
    text = (FIXTURES / "documented.json").read_text().replace(SHOWN_WORKSPACE, str(ws))
    payload: dict[str, Any] = json.loads(text)[name]
    return payload


def fixture(ws: Path, event: str, tool: str | None = None, **tool_input: Any) -> dict[str, Any]:
    """The captured payload of `event` (for `tool`); `tool_input` members replace its own."""
    for payload in captured(ws):
        if payload["hook_event_name"] == event and payload.get("tool_name") == tool:
            if tool_input:
                payload["tool_input"] = {**payload["tool_input"], **tool_input}
            return payload
    raise LookupError((event, tool))


class Answer:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err
        self.json: dict[str, Any] = json.loads(out) if out.strip() else {}

    @property
    def denied(self) -> str | None:
        """The reason when the answer blocks in Gemini's convention: the JSON deny on stdout and
        exit 2 with the reason on stderr (each alone blocks; intentd always gives both)."""
        if self.json.get("decision") in ("deny", "block"):
            assert self.code == 2 and self.err.strip() == self.json["reason"]
            return str(self.json["reason"])
        assert self.code != 2
        return None

    @property
    def allowed(self) -> bool:
        return self.code == 0 and self.json.get("decision", "allow") == "allow"


class Hook:
    """Runs `intentd hook gemini EVENT` in-process, as Gemini runs the command."""

    def __init__(self, socket_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str], timeout: float = 30) -> None:
        self.socket_path, self.ws, self.timeout = socket_path, ws, timeout
        self.monkeypatch, self.capsys = monkeypatch, capsys
        monkeypatch.chdir(ws)  # Gemini runs a hook in the session's cwd
        monkeypatch.setenv("GEMINI_PROJECT_DIR", str(ws))

    def raw(self, data: bytes, event: str) -> Answer:
        self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        self.capsys.readouterr()
        code = main(["hook", "gemini", event, "--socket", str(self.socket_path),
                     "--hook-timeout", str(self.timeout)])
        captured = self.capsys.readouterr()
        return Answer(code, captured.out, captured.err)

    def __call__(self, payload: dict[str, Any]) -> Answer:
        return self.raw(json.dumps(payload).encode(), payload["hook_event_name"])

    def pre(self, tool: str, **tool_input: Any) -> Answer:
        return self(fixture(self.ws, "BeforeTool", tool, **tool_input))

    def post(self, tool: str, **tool_input: Any) -> Answer:
        return self(fixture(self.ws, "AfterTool", tool, **tool_input))

    def select(self, intent_id: str = "INT-1") -> Answer:
        return self.pre("run_shell_command", command=f"intentd hook select {intent_id}")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", files={"src/app.py": APP, "README.md": "# r\n"})


@pytest.fixture
def hook(daemon: DaemonProcess, ws: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Hook:
    return Hook(daemon.socket_path, ws, monkeypatch, capsys)


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def test_every_payload_is_read_as_gemini_sent_it(ws: Path) -> None:
    kinds = []
    for payload in captured(ws):
        event = ADAPTER.event(None, payload)
        kinds.append((event.kind, event.tool_name))
        assert event.session_key == payload["session_id"] and event.cwd == str(ws)
        assert event.call_key == ""  # Gemini sends no call id: paired by name and arguments
    tools = ["read_file", "write_file", "replace", "run_shell_command", "glob", "grep_search",
             "list_directory"]
    assert kinds == [("session_start", ""),
                     *[(kind, tool) for tool in tools for kind in ("pre_tool", "post_tool")],
                     ("session_end", "")]
    read = ADAPTER.event(None, fixture(ws, "AfterTool", "read_file"))
    assert read.ok and read.output == APP
    shell = ADAPTER.event(None, fixture(ws, "AfterTool", "run_shell_command"))
    assert shell.ok and shell.output.startswith("<untrusted_context>")
    failed = ADAPTER.event(None, documented("after_tool_error", ws))
    assert not failed.ok and "Permission denied" in failed.output
    sample = ADAPTER.event(None, documented("before_tool_write_file", ws))
    assert (sample.kind, sample.tool_name, sample.session_key) == ("pre_tool", "write_file",
                                                                  "test-123")
    mcp = ADAPTER.event(None, documented("before_tool_mcp", ws))
    assert mcp.tool_name == "mcp__github__create_issue"  # from mcp_context, not the name
    assert ADAPTER.event(None, documented("session_start", ws)).kind == "session_start"
    assert ADAPTER.event(None, documented("session_end", ws)).kind == "session_end"


def test_gemini_tools_map_onto_the_pipeline(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws)

    def mapped(tool: str, cwd: str | None = None, **tool_input: Any) -> tuple[Any, ...]:
        payload = fixture(ws, "BeforeTool", tool, **tool_input)
        event = ADAPTER.event(None, payload)
        result = ADAPTER.map_tool(event.tool_name, event.tool_input, cwd)
        return result.tool, result.args, result.read_only

    assert mapped("read_file") == ("read_file", {"path": "src/app.py"}, True)
    assert mapped("write_file") == ("write_to_file", {"path": "src/notes.md",
                                                      "content": "# Notes\n"}, False)
    assert mapped("replace") == ("replace_in_file", {"path": "src/app.py", "old_str": "'hello'",
                                                     "new_str": "'hello, world'"}, False)
    assert mapped("run_shell_command") == ("execute_command",
                                           {"command": "git status --short"}, False)
    assert mapped("run_shell_command", dir_path="src") == (
        "execute_command", {"command": "git status --short", "cwd": "src"}, False)
    assert mapped("glob") == ("list_files", {"path": ".", "recursive": True}, True)
    # a pattern that leaves the folder is judged as a listing of where it goes
    assert mapped("glob", pattern="../**/*.env") == ("list_files",
                                                    {"path": "..", "recursive": True}, True)
    assert mapped("glob", pattern="/etc/*.conf")[1] == {"path": "/etc", "recursive": True}
    assert mapped("list_directory") == ("list_files", {"path": "src"}, True)
    grep = mapped("grep_search")
    assert grep[0] == "execute_command" and grep[2] and "rg --file - -- src" in grep[1]["command"]
    # a replacement of every occurrence, or a new file: the whole text the file will have
    every = mapped("replace", old_string="l", new_string="L", allow_multiple=True)
    assert every == ("write_to_file", {"path": "src/app.py",
                                       "content": APP.replace("l", "L")}, False)
    new = mapped("replace", file_path="src/new.py", old_string="", new_string="x = 1\n")
    assert new == ("write_to_file", {"path": "src/new.py", "content": "x = 1\n"}, False)
    # started in a sub-folder: paths are relative to it
    assert mapped("read_file", cwd="/w") == ("read_file", {"path": "/w/src/app.py"}, True)
    many = ADAPTER.map_tool("read_many_files", {"include": ["README.md", "src/**/*.py"]}, None)
    assert (many.tool, many.args, many.read_only) == ("read_file", {"path": "README.md"}, True)
    assert [(m.tool, m.read_only) for m in many.more] == [("execute_command", True)]
    assert "rg --file - -- src" in many.more[0].args["command"]
    select = ADAPTER.map_tool("run_shell_command", {"command": "intentd hook select INT-1"}, None)
    assert select.select == "INT-1"
    mcp_select = ADAPTER.map_tool("mcp_intentd_select_active_intent", {"intent_id": "INT-2"}, None)
    assert mcp_select.select == "INT-2"
    assert ADAPTER.map_tool("mcp_intentd_write_to_file", {}, None).tool is None  # gated there
    assert ADAPTER.map_tool("mcp_github_create_issue", {"t": 1}, None).tool == (
        "mcp__github__create_issue")
    for neutral in ("write_todos", "ask_user", "invoke_agent", "enter_plan_mode"):
        assert ADAPTER.map_tool(neutral, {}, None).tool is None
    for web in ("web_fetch", "google_web_search", "save_memory"):  # judged as destructive
        assert ADAPTER.map_tool(web, {"prompt": "x"}, None).tool == f"mcp__gemini__{web}"


def test_before_an_intent_reads_run_and_changes_are_denied_with_how_to_select(
        hook: Hook) -> None:
    for tool in ("read_file", "glob", "list_directory"):
        assert hook.pre(tool).allowed, tool
        assert hook.post(tool).allowed
    for tool, extra in (("write_file", {}), ("replace", {}),
                        ("run_shell_command", {"command": "touch src/x.py"})):
        answer = hook.pre(tool, **extra)
        reason = answer.denied
        assert reason is not None and GATE_MESSAGE in reason, tool
        assert "intentd hook select <INTENT_ID>" in reason and "run_shell_command" in reason
        assert "INT-1" in reason
    assert not (hook.ws / "src" / "notes.md").exists()


def test_session_start_teaches_the_handshake_through_gemini_context(hook: Hook) -> None:
    started = hook(fixture(hook.ws, "SessionStart"))
    assert started.code == 0
    output = started.json["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"]
    # Gemini escapes < and > of hook context: none are sent
    assert "intentd hook select INTENT_ID" in context and "<" not in context
    assert "run_shell_command" in context and "INT-1" in context
    assert unbracketed("a <b> <INTENT_ID>") == "a \u2039b\u203a INTENT_ID"
    ended = hook(fixture(hook.ws, "SessionEnd"))
    assert ended.code == 0 and ended.out == ""


def test_selected_then_a_read_a_write_an_edit_and_a_command_approved_by_another_client(
        hook: Hook, daemon: DaemonProcess, person: Person) -> None:
    assert hook.select().allowed
    assert hook.post("run_shell_command", command="intentd hook select INT-1").allowed
    stale = hook.pre("replace")
    assert stale.denied is not None and "read it again" in stale.denied  # not read yet
    assert hook.pre("read_file").allowed
    assert hook.post("read_file").allowed
    assert person.seen == []  # reads and the selection need nobody
    edit = hook.pre("replace")
    assert edit.allowed, edit.denied
    (hook.ws / "src" / "app.py").write_text(APP.replace("'hello'", "'hello, world'"))
    assert hook.post("replace").allowed  # Gemini applied it itself
    write = hook.pre("write_file")
    assert write.allowed, write.denied
    (hook.ws / "src" / "notes.md").write_text("# Notes\n")
    assert hook.post("write_file").allowed
    command = hook.pre("run_shell_command", command="touch src/made.py")
    assert command.allowed, command.denied
    (hook.ws / "src" / "made.py").write_text("")
    assert hook.post("run_shell_command", command="touch src/made.py").allowed
    assert [seen["tool"] for seen in person.seen] == ["replace_in_file", "write_to_file",
                                                     "execute_command"]
    entries = {e["intent"]["tool"]: e for e in ledger(daemon, hook.ws)
               if e.get("intent", {}).get("tool") != "read_file"}
    for tool in ("replace_in_file", "write_to_file", "execute_command"):
        entry = entries[tool]
        assert entry["intent"]["agent"] == "gemini" and entry["intent"]["intent_id"] == "INT-1"
        assert entry["approved_by"] == "person" and entry["receipt"]["result"] == "success"


def test_a_person_refusing_in_another_client_denies(hook: Hook, daemon: DaemonProcess) -> None:
    refusing = Person(daemon.socket_path, approve=False, feedback="not that greeting")
    try:
        assert hook.select().allowed
        assert hook.pre("read_file").allowed
        answer = hook.pre("replace")
    finally:
        refusing.close()
    assert answer.denied is not None and "not that greeting" in answer.denied


def test_writes_outside_the_intent_are_refused(hook: Hook, person: Person) -> None:
    assert hook.select().allowed
    outside = hook.pre("write_file", file_path="docs/plan.md")
    assert outside.denied is not None and "scope" in outside.denied
    shell = hook.pre("run_shell_command", command="touch docs/plan.md")
    assert shell.denied is not None
    assert person.seen == []
    assert not (hook.ws / "docs").exists()


def test_no_daemon_blocks_in_gemini_convention(ws: Path, short_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    hook = Hook(short_dir / "none.sock", ws, monkeypatch, capsys)
    for tool in ("write_file", "replace", "run_shell_command", "read_file", "glob"):
        answer = hook.pre(tool)
        assert answer.denied is not None, tool  # a headless Gemini has no prompt for a read
        assert "intentd" in answer.denied
    assert hook(documented("before_tool_write_file", ws)).denied is not None
    assert hook(documented("before_tool_mcp", ws)).denied is not None
    assert hook.pre("run_shell_command", command="intentd hook select INT-1").denied
    # input that cannot be read: the JSON deny and exit 2, whichever event it was
    garbage = hook.raw(b"{not json", "BeforeTool")
    assert garbage.denied is not None and "not JSON" in garbage.denied
    wrong = hook({**fixture(ws, "BeforeTool", "write_file"), "tool_input": "rm -rf /"})
    assert wrong.denied is not None
    # a tool intentd has no say on, a report, a session start: never blocked by its trouble
    assert hook({**fixture(ws, "BeforeTool", "glob"), "tool_name": "write_todos"}).allowed
    assert hook.post("write_file").code == 0
    assert hook(fixture(ws, "SessionStart")).code == 0


def mcp_payloads(ws: Path) -> list[dict[str, Any]]:
    text = (FIXTURES / "captured_0.61.0_mcp.json").read_text().replace(SHOWN_WORKSPACE, str(ws))
    events: list[dict[str, Any]] = json.loads(text)["events"]
    return events


def test_the_intentd_mcp_servers_select_counts_and_its_tools_are_not_gated_twice(
        hook: Hook, daemon: DaemonProcess, person: Person) -> None:
    select, read = mcp_payloads(hook.ws)
    assert ADAPTER.event(None, select).tool_name == "mcp__intentd__select_active_intent"
    assert hook(read).allowed  # the server gates its own tools
    assert hook(select).allowed
    # the hook's session now has the intent: a write is asked of the person, not refused
    write = hook.pre("write_file")
    assert write.allowed, write.denied
    assert [seen["tool"] for seen in person.seen] == ["write_to_file"]
    # another server's tool of that name is that server's, gated like any other
    other = {**select, "mcp_context": {**select["mcp_context"], "server_name": "intentd2"},
             "tool_name": "mcp_intentd2_select_active_intent"}
    assert ADAPTER.map_tool(ADAPTER.event(None, other).tool_name, {"intent_id": "INT-1"},
                            None).select is None


def test_a_daemon_that_never_answers_is_a_refusal_before_geminis_timeout(
        ws: Path, silent: SilentDaemon, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Gemini lets a call through when the hook outlives its timeout: the hook answers first."""
    hook = Hook(silent.path, ws, monkeypatch, capsys, timeout=4)
    started = time.monotonic()
    answer = hook.pre("write_file")
    elapsed = time.monotonic() - started
    assert answer.denied is not None and "ran out of its" in answer.denied
    assert elapsed < 4.0 and silent.connections() >= 1


def test_a_command_that_wrote_outside_the_scope_is_undone_and_gemini_is_told(
        hook: Hook, person: Person) -> None:
    assert hook.select().allowed
    command = "python3 -c \"open('docs/leak.md', 'w').write('x')\""
    assert hook.pre("run_shell_command", command=command).allowed  # a person said yes
    (hook.ws / "docs").mkdir()
    (hook.ws / "docs" / "leak.md").write_text("x")  # what Gemini's shell did
    told = hook.post("run_shell_command", command=command)
    # appended to the tool's result by Gemini (inside <hook_context>)
    output = told.json["hookSpecificOutput"]
    assert told.code == 0 and output["hookEventName"] == "AfterTool"
    assert "docs/leak.md" in output["additionalContext"]
    assert not (hook.ws / "docs" / "leak.md").exists()
