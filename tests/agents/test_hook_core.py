"""The shared hook core, driven by a small agent of the test's own, against a real daemon:
what every adapter gets without writing it (several calls in one, the handshake carried on a
tool call, an event's own timeout, a read recorded at once)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    HookEvent,
    HookInputError,
    Mapped,
    Reply,
)
from intentd.daemon.agents.hooks.core import HookOptions, handle
from intentd.daemon.agents.hooks.mapping import read_file, shell_call, write_file
from intentd.daemon.agents.hooks.state import MAX_TOLD, StateFile
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.conftest import Person, SilentDaemon


class Toy(Adapter):
    """An agent whose payload is {"event", "session", "tool", "input", "id"?, "timeout"?}."""

    name = "toy"
    label = "Toy"
    def __init__(self, reads_at_once: bool = False) -> None:
        self.reads_at_once = reads_at_once

    def event(self, hook_event: str | None, payload: Any) -> HookEvent:
        if not isinstance(payload, dict) or "event" not in payload:
            raise HookInputError("not a toy payload")
        kind = {"pre": "pre_tool", "post": "post_tool", "start": "session_start"}[payload["event"]]
        return HookEvent(kind=kind, name=payload["event"], session_key=payload["session"],  # type: ignore[arg-type]
                         cwd=payload.get("cwd"), tool_name=payload.get("tool", ""),
                         tool_input=payload.get("input"), call_key=payload.get("id", ""),
                         output=payload.get("output", ""), hook_timeout=payload.get("timeout"))

    def map_tool(self, tool_name: str, tool_input: Any, cwd: str | None) -> Mapped:
        if tool_name == "patch":  # one call that writes several files
            first, *rest = [write_file(path, text) for path, text in tool_input.items()]
            return Mapped(first.tool, first.args, more=tuple(rest))
        if tool_name == "note":
            return Mapped(None)
        if tool_name == "read":
            return read_file(tool_input)
        return shell_call(tool_input, cwd)

    def reports_at_once(self, event: HookEvent) -> bool:
        return self.reads_at_once and event.tool_name == "read"

    def allow(self, event: HookEvent, reason: str, context: str | None = None) -> Reply:
        return Reply.json({"verdict": "allow", "reason": reason, "context": context})

    def deny(self, event: HookEvent | None, reason: str) -> Reply:
        return Reply.json({"verdict": "deny", "reason": reason}, exit_code=2)

    def context(self, event: HookEvent, text: str) -> Reply:
        return Reply.json({"verdict": None, "context": text})


class ForgetfulToy(Toy):
    """A Toy that, like Cline, drops what its session-start hook says."""

    handshake_in_tool_context = True


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", files={"src/a.py": "a\n", "README.md": "# r\n"})


def call(adapter: Adapter, socket: Path, ws: Path, **payload: Any) -> dict[str, Any]:
    options = HookOptions(socket=socket, workspace=ws, approval_timeout=10)
    reply = handle(adapter, options, {"session": "s-1", "cwd": str(ws), **payload})
    return dict(json.loads(reply.stdout)) if reply.stdout else {}


def entries(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def test_a_call_of_several_writes_is_allowed_whole_or_not_at_all(
        daemon: DaemonProcess, ws: Path, person: Person) -> None:
    toy, sock = Toy(), daemon.socket_path
    assert call(toy, sock, ws, event="pre", tool="shell", input="intentd hook select INT-1",
                id="sel")["verdict"] == "allow"
    both = {str(ws / "src/b.py"): "b\n", str(ws / "src/c.py"): "c\n"}
    assert call(toy, sock, ws, event="pre", tool="patch", input=both, id="p1")["verdict"] == "allow"
    assert [a["tool"] for a in person.seen] == ["write_to_file", "write_to_file"]
    for path, text in both.items():
        Path(path).write_text(text)
    call(toy, sock, ws, event="post", tool="patch", input=both, id="p1", output="done")
    written = [e for e in entries(daemon, ws) if e["intent"]["tool"] == "write_to_file"]
    assert [e["receipt"]["result"] for e in written] == ["success", "success"]
    outside = {str(ws / "src/d.py"): "d\n", str(ws / "docs/e.md"): "e\n"}
    answer = call(toy, sock, ws, event="pre", tool="patch", input=outside, id="p2")
    assert answer["verdict"] == "deny" and "scope" in answer["reason"]
    first = [e for e in entries(daemon, ws) if e["intent"]["args"].get("path") == "src/d.py"
             or str(e["intent"]["args"].get("path", "")).endswith("src/d.py")]
    assert first and first[-1]["receipt"]["result"] == "error"  # approved, then not run
    assert first[-1]["receipt"]["files_after"] == {str(ws / "src/d.py"): None}


def test_the_handshake_rides_on_the_first_allowed_call_when_the_agent_drops_session_context(
        daemon: DaemonProcess, ws: Path) -> None:
    toy, sock = ForgetfulToy(), daemon.socket_path
    first = call(toy, sock, ws, event="pre", tool="read", input=str(ws / "README.md"), id="r1")
    assert first["verdict"] == "allow" and "intentd hook select <INTENT_ID>" in first["context"]
    second = call(toy, sock, ws, event="pre", tool="read", input=str(ws / "src/a.py"), id="r2")
    assert second["context"] is None
    refused = call(toy, sock, ws, event="pre", tool="shell", input="touch src/x", id="w")
    assert refused["verdict"] == "deny" and GATE_MESSAGE in refused["reason"]
    neutral = call(toy, sock, ws, event="pre", tool="note", input={}, id="n")
    assert "INT-1" in neutral["context"]  # again, after the refusal


def test_a_read_with_no_after_event_is_recorded_when_allowed(daemon: DaemonProcess,
                                                            ws: Path) -> None:
    toy = Toy(reads_at_once=True)
    answer = call(toy, daemon.socket_path, ws, event="pre", tool="read",
                  input=str(ws / "README.md"), id="r")
    assert answer["verdict"] == "allow"
    read = next(e for e in entries(daemon, ws) if e["intent"]["tool"] == "read_file")
    assert read["receipt"]["result"] == "success"


def test_an_events_own_timeout_sets_the_deadline(silent: SilentDaemon, ws: Path) -> None:
    started = time.monotonic()
    answer = call(Toy(), silent.path, ws, event="pre", tool="shell", input="touch src/x",
                  timeout=4.0)
    assert answer["verdict"] == "deny" and "ran out of its 3 s" in answer["reason"]
    assert time.monotonic() - started < 3.5


def test_input_the_adapter_refuses_is_denied(daemon: DaemonProcess, ws: Path) -> None:
    reply = handle(Toy(), HookOptions(socket=daemon.socket_path), ["not", "an", "object"])
    assert reply.exit_code == 2 and "not a toy payload" in json.loads(reply.stdout)["reason"]


def test_a_recorded_workspace_removed_since_gives_way_to_the_current_one(
        daemon: DaemonProcess, tmp_path: Path) -> None:
    first = make_workspace(tmp_path / "first", files={"README.md": "1\n"})
    second = make_workspace(tmp_path / "second", files={"README.md": "2\n"})
    toy, options = Toy(), HookOptions(socket=daemon.socket_path)

    def read(ws: Path) -> dict[str, Any]:
        payload = {"event": "pre", "session": "s-moved", "cwd": str(ws), "tool": "read",
                   "input": str(ws / "README.md")}
        return dict(json.loads(handle(toy, options, payload).stdout))

    assert read(first)["verdict"] == "allow"
    kept = StateFile("toy", "s-moved").read()
    assert kept.workspace == str(first.resolve())
    shutil.rmtree(first)
    assert read(second)["verdict"] == "allow"
    now = StateFile("toy", "s-moved").read()
    assert now.workspace == str(second.resolve()) and now.session_id != kept.session_id


def test_an_adapter_whose_own_deny_breaks_still_blocks(short_dir: Path, ws: Path) -> None:
    class Broken(Toy):
        def deny(self, event: HookEvent | None, reason: str) -> Reply:
            raise RuntimeError("the deny itself broke")

    reply = handle(Broken(), HookOptions(socket=short_dir / "nobody.sock"),
                   {"event": "pre", "session": "s", "cwd": str(ws), "tool": "shell",
                    "input": "touch src/x"})
    assert reply.exit_code == 2 and "the deny itself broke" in reply.stderr


def test_messages_waiting_for_a_later_report_are_kept_bounded_and_read_safely() -> None:
    """The scope audit's word for an agent that ignored a report's answer waits in the state
    file: the oldest go first past the bound, and a field of the wrong shape reads as empty."""
    state = StateFile("toy", "s-told")
    with state.locked() as session:
        session.told = {f"call-{n}": f"undone: f{n}" for n in range(MAX_TOLD + 5)}
    kept = state.read().told
    assert len(kept) == MAX_TOLD and "call-0" not in kept
    assert kept[f"call-{MAX_TOLD + 4}"] == f"undone: f{MAX_TOLD + 4}"
    state.path.write_text(json.dumps({"session_id": "s", "told": ["not", "a", "map"]}))
    assert state.read().told == {} and state.read().session_id == "s"
