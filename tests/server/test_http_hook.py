"""The daemon's HTTP hook for Claude Code, against a real daemon: the pipeline behind it, and
everyone it must turn away (no token, another user, a web page, malformed requests)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.adapter import Reply
from intentd.daemon.agents.hooks.claude import ADAPTER
from intentd.daemon.client import Client
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.server import http_hook, http_wire
from intentd.daemon.server.claude_http import HOOK_METHODS
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.agents.conftest import Person
from tests.server.http_hook_client import SESSION, HookClient, hook_files, payload


@pytest.fixture
def hook_daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    """A daemon whose HTTP hook listens on a free port (its status file says which)."""
    with DaemonProcess(short_dir / "d.sock", short_dir / "state",
                       extra_env={"INTENTD_HTTP_HOOK": "0"}) as process:
        yield process


@pytest.fixture
def hook(hook_daemon: DaemonProcess) -> HookClient:
    return HookClient(*hook_files(hook_daemon.state_dir))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", files={"src/app.py": "x = 1\n", "README.md": "# r\n"})


@pytest.fixture
def person(hook_daemon: DaemonProcess) -> Iterator[Person]:
    answering = Person(hook_daemon.socket_path)
    yield answering
    answering.close()


def ledger(daemon: DaemonProcess, ws: Path) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.LEDGER_QUERY, {"workspace": str(ws)})["entries"])


def calls(daemon: DaemonProcess, ws: Path, tool: str) -> list[dict[str, Any]]:
    """The ledger's decided entries of `tool` (an intent line precedes each receipt)."""
    return [e for e in ledger(daemon, ws)
            if e.get("intent", {}).get("tool") == tool and "decision" in e]


def sessions(daemon: DaemonProcess) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        return list(client.call(protocol.SESSIONS_LIST)["sessions"])


def pending(daemon: DaemonProcess) -> list[dict[str, Any]]:
    with Client(daemon.socket_path) as client:
        client.initialize("test-person")
        return list(client.call(protocol.APPROVALS_LIST)["approvals"])


# -- the pipeline behind it ---------------------------------------------------------------------

def test_the_gate_the_selection_an_approval_and_the_report(
        hook: HookClient, hook_daemon: DaemonProcess, ws: Path, person: Person) -> None:
    verdict, reason = hook.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"),
                                             "content": "n = 1\n"})
    assert verdict == "deny" and GATE_MESSAGE in reason and "intentd hook select" in reason

    status, answer = hook.post(payload("PreToolUse", ws, "Bash",
                                       {"command": "intentd hook select INT-1"}, use_id="t2"))
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow" and "INT-1" in out["additionalContext"]

    verdict, reason = hook.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"),
                                             "content": "n = 1\n"}, use_id="t3")
    assert verdict == "allow" and "approved by a person" in reason
    assert [a["tool"] for a in person.seen] == ["write_to_file"]
    assert person.seen[0]["batch"] == payload("PreToolUse", ws)["prompt_id"], "its turn"
    (ws / "src" / "n.py").write_text("n = 1\n")  # Claude Code writes it
    status, answer = hook.post(payload("PostToolUse", ws, "Write",
                                       {"file_path": str(ws / "src" / "n.py"),
                                        "content": "n = 1\n"}, use_id="t3"))
    assert status == 200 and answer == {}

    written = calls(hook_daemon, ws, "write_to_file")
    assert written[-1]["receipt"]["result"] == "success"
    assert written[-1]["approved_by"] == "person"
    assert written[-1]["intent"]["intent_id"] == "INT-1"
    assert {s["agent"] for s in sessions(hook_daemon)} == {"claude-code"}
    assert {e["intent"]["agent"] for e in ledger(hook_daemon, ws)} == {"claude-code"}


def test_out_of_scope_is_refused_and_a_read_is_allowed(hook: HookClient, ws: Path) -> None:
    hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
    verdict, reason = hook.pre(ws, "Write", {"file_path": str(ws / "README.md"), "content": "x"},
                               use_id="t2")
    assert verdict == "deny" and "scope" in reason.lower()
    verdict, _ = hook.pre(ws, "Read", {"file_path": str(ws / "src" / "app.py")}, use_id="t3")
    assert verdict == "allow"


def test_with_no_approver_claude_codes_own_prompt_asks(hook: HookClient, ws: Path,
                                                       hook_daemon: DaemonProcess) -> None:
    hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
    verdict, _ = hook.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"), "content": "n\n"},
                          use_id="t2")
    assert verdict == "ask"
    (ws / "src" / "n.py").write_text("n\n")  # the person said yes in Claude Code's prompt
    hook.post(payload("PostToolUse", ws, "Write", {"file_path": str(ws / "src" / "n.py"),
                                                   "content": "n\n"}, use_id="t2"))
    written = calls(hook_daemon, ws, "write_to_file")
    assert written[-1]["approved_by"] == "person (in the agent's own prompt)"


def test_a_neutral_tool_has_no_opinion_and_session_end_closes(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess) -> None:
    status, answer = hook.post(payload("PreToolUse", ws, "TodoWrite", {"todos": []}))
    assert (status, answer) == (200, {})
    hook.pre(ws, "Read", {"file_path": str(ws / "README.md")})
    assert len(sessions(hook_daemon)) == 1
    assert hook.post(payload("SessionEnd", ws)) == (200, {})
    assert sessions(hook_daemon) == []


def test_claude_code_giving_up_withdraws_the_approval(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess) -> None:
    watcher = Client(hook_daemon.socket_path, timeout=10).connect()  # an approver that never answers
    watcher.initialize("test-person")
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED],
                                             "approver": True})
    try:
        hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
        quick = HookClient(hook.port, hook.token, timeout=1.0)
        with pytest.raises(TimeoutError):
            quick.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"), "content": "n\n"},
                      use_id="t2")
        deadline = time.monotonic() + 10
        while pending(hook_daemon) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pending(hook_daemon) == []
        written = calls(hook_daemon, ws, "write_to_file")
        assert written[-1]["decision"] == "deny" and "withdrawn" in written[-1]["reason"]
    finally:
        watcher.close()


def test_an_approval_waits_no_longer_than_the_hooks_timeout(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess) -> None:
    watcher = Client(hook_daemon.socket_path, timeout=10).connect()
    watcher.initialize("test-person")
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED],
                                             "approver": True})
    try:
        hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
        started = time.monotonic()
        status, answer = hook.post(payload("PreToolUse", ws, "Write", {
            "file_path": str(ws / "src" / "n.py"), "content": "n\n"}, use_id="t2"),
            path="/claude-code?timeout=3.5")
        assert time.monotonic() - started < 3.5
        out = answer["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny"
        assert "no person answered" in out["permissionDecisionReason"]
    finally:
        watcher.close()


# -- who is turned away -------------------------------------------------------------------------

@pytest.mark.parametrize("token", [None, "", "not-the-token", "x" * 43])
def test_a_request_without_the_right_token_is_denied(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess, token: str | None) -> None:
    client = HookClient(hook.port, token)
    verdict, reason = client.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"),
                                               "content": "n\n"})
    assert verdict == "deny" and "token is missing or wrong" in reason
    assert sessions(hook_daemon) == []  # nothing reached the pipeline


def test_a_bearer_without_a_space_or_in_another_header_is_no_token(
        hook: HookClient, ws: Path) -> None:
    for headers in ({"Authorization": f"Bearer{hook.token}"},
                    {"Authorization": f"Basic {hook.token}"},
                    {"X-Token": hook.token or ""}):
        status, answer = HookClient(hook.port, None).post(
            payload("PreToolUse", ws, "Read", {"file_path": "/etc/hostname"}), headers=headers)
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny", headers


@pytest.mark.parametrize(("headers", "path", "status"), [
    ({"Host": "evil.example:80"}, "/claude-code", 421),        # DNS rebinding
    ({"Host": "127.0.0.1"}, "/claude-code", 421),              # no port: not our origin
    ({"Origin": "https://evil.example"}, "/claude-code", 403),  # a web page's cross-origin POST
    ({"Origin": "null"}, "/claude-code", 403),
    ({"Content-Type": "text/plain"}, "/claude-code", 415),     # a form or a "simple" request
    ({}, "/other", 404),
    ({}, "/claude-code?timeout=abc", 400),
    ({}, "/claude-code?timeout=0", 400),
])
def test_requests_a_browser_could_send_are_refused(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess, headers: dict[str, str],
        path: str, status: int) -> None:
    got, answer = hook.post(payload("PreToolUse", ws, "Read", {"file_path": "/etc/hostname"}),
                            headers=headers, path=path)
    assert got == status and "error" in answer
    assert "Access-Control-Allow-Origin" not in json.dumps(answer)
    assert sessions(hook_daemon) == []


def test_a_big_request_without_the_token_is_refused_before_its_body(hook: HookClient) -> None:
    """Without the token a request gets no room: 300 of them, each announcing 8 MiB, would
    otherwise hold every slot and gigabytes while their bodies trickled in."""
    head = (f"POST /claude-code HTTP/1.1\r\nHost: 127.0.0.1:{hook.port}\r\n"
            "Content-Type: application/json\r\nAuthorization: Bearer not-the-token\r\n"
            f"Content-Length: {8 * 1024 * 1024}\r\n\r\n").encode()
    answer = hook.raw(head)  # no body is sent: the answer comes all the same
    assert answer.startswith(b"HTTP/1.1 401") and b"token is missing or wrong" in answer


def test_no_cors_headers_even_on_a_preflight(hook: HookClient) -> None:
    answer = hook.raw(f"OPTIONS /claude-code HTTP/1.1\r\nHost: 127.0.0.1:{hook.port}\r\n"
                      "Origin: https://evil.example\r\nAccess-Control-Request-Method: POST\r\n"
                      "\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403") and b"access-control" not in answer.lower()


def test_malformed_requests_get_an_error_and_the_daemon_goes_on(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess) -> None:
    host = f"Host: 127.0.0.1:{hook.port}\r\n".encode()
    auth = f"Authorization: Bearer {hook.token}\r\n".encode()
    json_type = b"Content-Type: application/json\r\n"
    cases = [
        b"\x00\xff\xfe garbage\r\n\r\n",
        b"GET / HTTP/1.1\r\n" + host + b"\r\n",
        b"POST /claude-code HTTP/2.0\r\n" + host + b"\r\n",
        b"POST /claude-code HTTP/1.1\r\n" + host + host + b"\r\n",            # two Hosts
        b"POST /claude-code HTTP/1.1\r\n" + host + json_type + auth + b"\r\n",  # no length
        b"POST /claude-code HTTP/1.1\r\n" + host + json_type + auth
        + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        b"POST /claude-code HTTP/1.1\r\n" + host + json_type + auth
        + b"Content-Length: 99999999999\r\n\r\n",
        b"POST /claude-code HTTP/1.1\r\n" + host + json_type + auth
        + b"Content-Length: 5\r\n\r\n[1,2]",                                   # not an object
        b"POST /claude-code HTTP/1.1\r\n" + host + json_type + auth
        + b"Content-Length: 4\r\n\r\n{{{{",
        b"POST /claude-code HTTP/1.1\r\n" + b"X-Long: " + b"a" * 20000 + b"\r\n\r\n",
        b"POST /claude-code HTTP/1.1\r\n" + host + b" folded: header\r\n\r\n",
        b"POST /claude-code HTTP/1.1\r\nHost : 127.0.0.1\r\n" + host + b"\r\n",
        b"POST /claude-code HTTP/1.1\r\n" + host + json_type + auth
        + b"Content-Length: 100\r\n\r\n{\"short\": 1",                        # body cut short
    ]
    for data in cases:
        answer = hook.raw(data) if not data.endswith(b"{\"short\": 1") else hook.raw(data, False)
        assert answer == b"" or answer.split(b" ")[1][:1] in (b"4",), (data[:60], answer[:200])
    nested = b"[" * 100_000 + b"]" * 100_000
    status, _ = hook.post(nested)
    assert status == 400
    verdict, _ = hook.pre(ws, "Read", {"file_path": str(ws / "README.md")})  # still answering
    assert verdict == "allow"
    assert hook_daemon.process is not None and hook_daemon.process.poll() is None


def test_a_client_that_never_finishes_its_headers_does_not_hold_others(
        hook: HookClient, ws: Path) -> None:
    slow = [socket.create_connection(("127.0.0.1", hook.port)) for _ in range(20)]
    try:
        for sock in slow:
            sock.sendall(b"POST /claude-code HTTP/1.1\r\nHost: 127")
        verdict, _ = hook.pre(ws, "Read", {"file_path": str(ws / "README.md")})
        assert verdict == "allow"
    finally:
        for sock in slow:
            sock.close()


PROBE = """
import http.client, json, sys
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
try:
    conn.request("POST", "/claude-code", body=b"{}", headers={
        "Host": "127.0.0.1:" + sys.argv[1], "Content-Type": "application/json",
        "Authorization": "Bearer " + sys.argv[2]})
    print(conn.getresponse().status)
except (ConnectionError, http.client.HTTPException) as exc:
    print("refused", type(exc).__name__)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process as another user")
def test_another_local_user_is_turned_away_even_with_the_token(
        hook: HookClient, hook_daemon: DaemonProcess) -> None:
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 that another user may run")
    done = subprocess.run([python, "-c", PROBE, str(hook.port), hook.token or ""],
                          user=65534, group=65534, capture_output=True, text=True, timeout=30,
                          cwd="/", env={"PATH": os.environ.get("PATH", "")})
    assert done.stdout.startswith("refused"), (done.stdout, done.stderr)
    same_user = subprocess.run([sys.executable, "-c", PROBE, str(hook.port), hook.token or ""],
                               capture_output=True, text=True, timeout=30)
    assert same_user.stdout.strip() == "200"


def test_the_token_file_is_private_and_kept_across_restarts(short_dir: Path) -> None:
    state = short_dir / "state"
    env = {"INTENTD_HTTP_HOOK": "0"}
    with DaemonProcess(short_dir / "d.sock", state, extra_env=env):
        port, token = hook_files(state)
    folder = state / "intentd" / "http-hook"
    assert stat.S_IMODE((folder / "token").stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "status.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert len(token) >= 40
    with DaemonProcess(short_dir / "d.sock", state, extra_env=env):
        assert hook_files(state)[1] == token


def test_a_token_file_others_can_read_turns_the_hook_off(short_dir: Path) -> None:
    state = short_dir / "state"
    folder = state / "intentd" / "http-hook"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "token").write_text("t" * 43 + "\n")
    (folder / "token").chmod(0o644)
    with DaemonProcess(short_dir / "d.sock", state, extra_env={"INTENTD_HTTP_HOOK": "0"}):
        assert not (folder / "status.json").exists()


def test_the_hook_can_be_turned_off(short_dir: Path) -> None:
    state = short_dir / "state"
    with DaemonProcess(short_dir / "d.sock", state, extra_env={"INTENTD_HTTP_HOOK": "off"}):
        assert not (state / "intentd" / "http-hook").exists()


def test_the_hook_carries_agent_methods_only() -> None:
    assert HOOK_METHODS and not any(protocol.is_person_method(m) for m in HOOK_METHODS)
    assert protocol.APPROVALS_RESPOND not in HOOK_METHODS
    assert protocol.SETTINGS_UPDATE not in HOOK_METHODS


def test_parallel_first_calls_of_one_session_share_one_daemon_session(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess) -> None:
    import concurrent.futures

    for i in range(8):
        (ws / "src" / f"f{i}.py").write_text(f"f = {i}\n")
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(
            lambda i: hook.pre(ws, "Read", {"file_path": str(ws / "src" / f"f{i}.py")},
                               use_id=f"p{i}"), range(8)))
    assert [v for v, _ in verdicts] == ["allow"] * 8, verdicts
    assert len(sessions(hook_daemon)) == 1
    assert SESSION  # the one Claude Code session


# -- the parser alone, on anything ----------------------------------------------------------------

class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.out, self.closed = bytearray(), False

    def write(self, data: Any) -> None:
        self.out += data

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


class StubSessions:
    adapter = ADAPTER

    async def answer(self, payload: Any, options: Any) -> Reply:
        return Reply.json({"ok": True})


REQUESTS = st.binary(max_size=600) | st.builds(
    lambda line, headers, body: line + b"\r\n" + b"\r\n".join(headers) + b"\r\n\r\n" + body,
    st.sampled_from([b"POST /claude-code HTTP/1.1", b"POST  / HTTP/1.1", b"GET /x HTTP/1.0"])
    | st.binary(max_size=40),
    st.lists(st.binary(max_size=60) | st.sampled_from([
        b"Host: 127.0.0.1:1", b"Content-Length: 5", b"Content-Length: -1", b": x",
        b"Content-Type: application/json", b"Authorization: Bearer " + b"t" * 43]),
        max_size=8),
    st.binary(max_size=40))


@settings(max_examples=300, deadline=None)
@given(REQUESTS, st.integers(min_value=1, max_value=64))
def test_the_request_parser_answers_or_refuses_never_crashes(data: bytes, chunk: int) -> None:
    async def feed() -> bytes:
        server = http_hook.HttpHookServer(StubSessions(), "t" * 43, 1)  # type: ignore[arg-type]
        connection = http_hook.HookConnection(server)
        transport = FakeTransport()
        connection.transport = transport
        for start in range(0, len(data), chunk):
            connection.data_received(data[start:start + chunk])
        if connection.task is not None:
            await connection.task
        connection.connection_lost(None)
        return bytes(transport.out)

    out = asyncio.run(feed())
    assert out == b"" or out.startswith((b"HTTP/1.1 200 ", b"HTTP/1.1 4")), out[:80]


@given(st.text(max_size=80))
def test_the_query_parser_answers_or_refuses_never_crashes(query: str) -> None:
    try:
        options = http_wire.options_of(query)
    except http_wire.Refused:
        return
    assert 1.0 <= options.timeout <= http_wire.MAX_HOOK_TIMEOUT


def test_a_call_waiting_for_a_person_when_the_daemon_stops_is_denied(
        hook: HookClient, ws: Path, hook_daemon: DaemonProcess) -> None:
    import threading

    watcher = Client(hook_daemon.socket_path, timeout=10).connect()
    watcher.initialize("test-person")
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED],
                                             "approver": True})
    hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
    answers: list[tuple[str, str]] = []
    waiting = threading.Thread(target=lambda: answers.append(hook.pre(
        ws, "Write", {"file_path": str(ws / "src" / "n.py"), "content": "n\n"}, use_id="t2")))
    waiting.start()
    deadline = time.monotonic() + 10
    while not pending(hook_daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pending(hook_daemon)
    hook_daemon.stop()  # the approver still connected: the wait ends by the stop alone
    waiting.join(15)
    watcher.close()
    assert answers and answers[0][0] == "deny" and "stopping" in answers[0][1], answers


def test_the_selected_intent_survives_a_daemon_restart(short_dir: Path, ws: Path) -> None:
    state, env = short_dir / "state", {"INTENTD_HTTP_HOOK": "0"}
    with DaemonProcess(short_dir / "d.sock", state, extra_env=env):
        hook = HookClient(*hook_files(state))
        hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
    (state / "intentd" / "http-hook" / "status.json").unlink()
    with DaemonProcess(short_dir / "d.sock", state, extra_env=env):
        hook = HookClient(*hook_files(state))
        verdict, reason = hook.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"),
                                                 "content": "n\n"}, use_id="t2")
        assert verdict == "ask" and GATE_MESSAGE not in reason, reason  # the gate passed: INT-1 again
        hook.post(payload("SessionEnd", ws))
    (state / "intentd" / "http-hook" / "status.json").unlink()
    with DaemonProcess(short_dir / "d.sock", state, extra_env=env):  # ended: forgotten
        hook = HookClient(*hook_files(state))
        verdict, reason = hook.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"),
                                                 "content": "n\n"}, use_id="t3")
        assert verdict == "deny" and GATE_MESSAGE in reason


def test_an_intent_completed_while_the_daemon_was_down_is_not_selected_again(
        short_dir: Path, ws: Path) -> None:
    from intentd.daemon.testing import make_intent, write_intents

    state, env = short_dir / "state", {"INTENTD_HTTP_HOOK": "0"}
    with DaemonProcess(short_dir / "d.sock", state, extra_env=env):
        hook = HookClient(*hook_files(state))
        hook.post(payload("PreToolUse", ws, "Bash", {"command": "intentd hook select INT-1"}))
    write_intents(ws, make_intent(status="COMPLETE"))
    (state / "intentd" / "http-hook" / "status.json").unlink()
    with DaemonProcess(short_dir / "d.sock", state, extra_env=env):
        hook = HookClient(*hook_files(state))
        verdict, reason = hook.pre(ws, "Write", {"file_path": str(ws / "src" / "n.py"),
                                                 "content": "n\n"}, use_id="t2")
        assert verdict == "deny" and GATE_MESSAGE in reason
        assert "selected before the daemon restarted" in reason
