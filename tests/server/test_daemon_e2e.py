"""The daemon end to end: several real clients on a real socket."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError
from intentd.daemon.testing import DaemonProcess, make_workspace
from tests.server.helpers import Background, open_session, wait_notification

Connect = Callable[[str], Client]


def test_another_client_approves_and_the_first_answer_wins(connect: Connect, workspace: Path) -> None:
    agent, person, late = connect("agent"), connect("gui"), connect("cli")
    person.call(protocol.EVENTS_SUBSCRIBE, {})
    session_id = open_session(agent, workspace)
    call = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id, "tool": "write_to_file",
                                                   "args": {"path": "src/new.py", "content": "x = 1\n"}})
    request = wait_notification(person, protocol.APPROVALS_REQUESTED)
    assert request["tool"] == "write_to_file" and request["intent_id"] == "INT-1"
    assert request["session_id"] == session_id and request["workspace"] == str(workspace.resolve())
    assert "+x = 1" in request["diff"] and request["reason"]
    person.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "approve"})
    answer = call.result()
    assert answer["decision"] == "allow" and answer["approved_by"] == "person"
    assert answer["result"]["ok"] and (workspace / "src" / "new.py").read_text() == "x = 1\n"
    assert answer["checkpoint_id"], "a checkpoint was taken before the write"
    with pytest.raises(RpcError) as caught:
        late.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "reject"})
    assert caught.value.code == protocol.UNKNOWN_APPROVAL
    resolved = wait_notification(person, protocol.APPROVALS_RESOLVED)
    assert resolved["resolution"] == "approved"


def test_a_caller_that_disconnects_withdraws_its_request(connect: Connect, workspace: Path,
                                                         daemon: DaemonProcess) -> None:
    person = connect("gui")
    person.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED,
                                                       protocol.APPROVALS_RESOLVED]})
    agent = Client(daemon.socket_path).connect()
    session_id = open_session(agent, workspace)
    agent.send(protocol.request(protocol.TOOLS_CALL, {
        "session_id": session_id, "tool": "write_to_file",
        "args": {"path": "src/x.py", "content": ""}}, id=1))
    request = wait_notification(person, protocol.APPROVALS_REQUESTED)
    agent.close()
    resolved = wait_notification(person, protocol.APPROVALS_RESOLVED)
    assert (resolved["approval_id"], resolved["resolution"]) == (request["id"], "withdrawn")
    assert person.call(protocol.APPROVALS_LIST)["approvals"] == []
    assert person.call(protocol.SESSIONS_LIST)["sessions"] == [], "its session closed too"


def test_a_rejection_returns_the_feedback_and_skips_the_rest_of_the_batch(
        connect: Connect, workspace: Path) -> None:
    agent, person = connect("agent"), connect("gui")
    person.call(protocol.EVENTS_SUBSCRIBE, {})
    session_id = open_session(agent, workspace)
    params = {"session_id": session_id, "tool": "write_to_file", "batch": "turn-1",
              "args": {"path": "src/a.py", "content": "a"}}
    call = Background(agent, protocol.TOOLS_CALL, params)
    request = wait_notification(person, protocol.APPROVALS_REQUESTED)
    person.call(protocol.APPROVALS_RESPOND, {"approval_id": request["id"], "decision": "reject",
                                             "feedback": "use src/b.py instead"})
    answer = call.result()
    assert (answer["decision"], answer["stage"]) == ("deny", "approval")
    assert answer["feedback"] == "use src/b.py instead"
    assert "use src/b.py instead" in answer["result"]["output"]
    skipped = agent.call(protocol.TOOLS_CALL, {**params, "args": {"path": "src/c.py", "content": ""}})
    assert skipped["decision"] == "deny" and "rejected an earlier call of this turn" in skipped["reason"]
    assert not (workspace / "src" / "a.py").exists() and not (workspace / "src" / "c.py").exists()
    nxt = Background(agent, protocol.TOOLS_CALL, {**params, "batch": "turn-2"})
    second = wait_notification(person, protocol.APPROVALS_REQUESTED)
    assert second["batch"] == "turn-2"
    person.call(protocol.APPROVALS_RESPOND, {"approval_id": second["id"], "decision": "approve"})
    assert nxt.result()["decision"] == "allow"


def test_an_unanswered_approval_times_out_refused(connect: Connect, workspace: Path) -> None:
    agent = connect("agent")
    session_id = open_session(agent, workspace)
    answer = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "write_to_file",
                                              "args": {"path": "src/t.py", "content": ""},
                                              "approval_timeout": 0.3})
    assert answer["decision"] == "deny" and "no person answered" in answer["reason"]
    assert not (workspace / "src" / "t.py").exists()


def test_intents_edits_and_errors_are_notified(connect: Connect, workspace: Path) -> None:
    watcher = connect("gui")
    watcher.call(protocol.INTENTS_LIST, {"workspace": str(workspace)})
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.INTENTS_CHANGED,
                                                        protocol.INTENTS_ERROR]})
    path = workspace / ".orchestration" / "active_intents.yaml"
    good = path.read_text()
    path.write_text(good.replace("INT-1", "INT-9"))
    changed = wait_notification(watcher, protocol.INTENTS_CHANGED)
    assert [i["id"] for i in changed["intents"]] == ["INT-9"] and changed["warnings"] == []
    path.write_text("active_intents: [\n")
    error = wait_notification(watcher, protocol.INTENTS_ERROR)["error"]
    assert error["file"] == str(path.resolve()) and error["line"] == 2
    listed = watcher.call(protocol.INTENTS_LIST, {"workspace": str(workspace)})
    assert [i["id"] for i in listed["intents"]] == ["INT-9"] and listed["error"]["line"] == 2
    path.write_text(good)
    assert wait_notification(watcher, protocol.INTENTS_ERROR)["error"] is None


def raw_exchange(sock: socket.socket, payload: bytes) -> Any:
    sock.sendall(payload)
    data = b""
    while not data.endswith(b"\n"):
        data += sock.recv(65536)
    return json.loads(data)


@pytest.mark.parametrize(("payload", "code"), [
    (b"{not json\n", protocol.PARSE_ERROR),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "x"}\n', protocol.INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": 1}\n', protocol.INVALID_REQUEST),
    (b'"just a string"\n', protocol.INVALID_REQUEST),
    (b'[]\n', protocol.INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "nope/nope"}\n', protocol.METHOD_NOT_FOUND),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "sessions/open", "params": {"workspace": 5}}\n',
     protocol.INVALID_PARAMS),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"session_id": "s-x", '
     b'"tool": "read_file"}}\n', protocol.UNKNOWN_SESSION),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocol_version": 99}}\n',
     protocol.UNSUPPORTED_VERSION),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "sessions/open", "params": {"workspace": "/nope/x"}}\n',
     protocol.UNKNOWN_WORKSPACE),
    (b"\xff\xfe garbage\n", protocol.PARSE_ERROR),
])
def test_malformed_input_gets_an_error_and_the_connection_stays_usable(
        daemon: DaemonProcess, payload: bytes, code: int) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(daemon.socket_path))
        assert raw_exchange(sock, payload)["error"]["code"] == code
        ok = raw_exchange(sock, b'{"jsonrpc": "2.0", "id": 2, "method": "approvals/list"}\n')
        assert ok == {"jsonrpc": "2.0", "id": 2, "result": {"approvals": [], "approvers": 0}}


def test_an_oversized_line_is_refused_and_a_batch_is_answered(daemon: DaemonProcess) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(20)
        sock.connect(str(daemon.socket_path))
        big = (b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"p": "'
               + b"a" * (9 << 20) + b'"}}\n')
        assert raw_exchange(sock, big)["error"]["code"] == protocol.REQUEST_TOO_LARGE
        batch = (b'[{"jsonrpc": "2.0", "id": 1, "method": "approvals/list"},'
                 b'{"jsonrpc": "2.0", "method": "approvals/list"}, {"bad": 1}]\n')
        answers = raw_exchange(sock, batch)
        assert [a.get("id") for a in answers] == [1, None]
        assert answers[1]["error"]["code"] == protocol.INVALID_REQUEST
        # one short line cannot ask for a minute of work: a batch has a size
        request = '{"jsonrpc": "2.0", "id": %d, "method": "tools/list"}'
        for size, answered in ((protocol.MAX_BATCH, protocol.MAX_BATCH),
                               (protocol.MAX_BATCH + 1, 0)):
            line = ("[" + ",".join(request % n for n in range(size)) + "]\n").encode()
            answers = raw_exchange(sock, line)
            if answered:
                assert [a["id"] for a in answers] == list(range(size))
            else:
                assert answers["error"]["code"] == protocol.REQUEST_TOO_LARGE


def test_a_stuck_client_does_not_block_others(daemon: DaemonProcess, connect: Connect,
                                              workspace: Path) -> None:
    stuck = socket.socket(socket.AF_UNIX)
    stuck.connect(str(daemon.socket_path))
    stuck.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "events/subscribe"}\n{"jsonrpc": "2.0", ')
    other = connect("other")
    session_id = open_session(other, workspace)
    for line in range(1, 16):  # tools/finished events nobody reads on `stuck`
        answer = other.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "read_file",
                                                  "args": {"path": "README.md", "start_line": line}})
        assert answer["decision"] == "allow"
    stuck.close()


def test_a_second_daemon_refuses_and_a_stale_socket_is_cleaned(short_dir: Path) -> None:
    path = short_dir / "s.sock"
    with DaemonProcess(path, short_dir / "state"):
        second = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "serve", "--socket",
                                 str(path)], capture_output=True, text=True, timeout=30)
        assert second.returncode == 1 and "already serving" in second.stderr
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))  # a socket file nobody listens on, as a crash leaves it
    stale.close()
    with DaemonProcess(path, short_dir / "state") as again:
        assert again.answers()
        assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)


def test_sigterm_answers_pending_approvals_and_flushes_the_ledger(short_dir: Path,
                                                                  workspace: Path) -> None:
    daemon = DaemonProcess(short_dir / "d.sock", short_dir / "state").start()
    agent = Client(daemon.socket_path, timeout=20).connect()
    session_id = open_session(agent, workspace)
    call = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id, "tool": "write_to_file",
                                                   "args": {"path": "src/x.py", "content": ""}})
    deadline = time.monotonic() + 10
    with Client(daemon.socket_path) as probe:
        while not probe.call(protocol.APPROVALS_LIST)["approvals"]:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    assert daemon.stop() == 0
    with pytest.raises(RpcError) as caught:
        call.result()
    assert caught.value.code == protocol.DAEMON_STOPPING
    assert not daemon.socket_path.exists()
    ledgers = list((short_dir / "state").rglob("ledger.jsonl"))
    entries = [json.loads(line) for line in ledgers[0].read_text().splitlines()]
    assert entries[-1]["intent"]["tool"] == "write_to_file" and entries[-1]["decision"] == "deny"


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_another_users_connection_is_refused(daemon: DaemonProcess) -> None:
    # Open the folder and socket up so only the SO_PEERCRED check stands in the way.
    os.chmod(daemon.socket_path.parent, 0o755)
    os.chmod(daemon.socket_path, 0o666)
    # The daemon answers a stranger at once with a refusal and hangs up, before any request.
    script = ("import os, socket, sys; os.setgid(65534); os.setuid(65534); "
              "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5); "
              "print(s.recv(4096).decode()); print('closed' if s.recv(4096) == b'' else 'open')")
    out = subprocess.run([sys.executable, "-c", script, str(daemon.socket_path)],
                         capture_output=True, text=True, timeout=30)
    assert "connections from other users are refused" in out.stdout
    assert out.stdout.rstrip().endswith("closed")


def test_load_50_clients_200_calls_no_lost_or_duplicated_answer(daemon: DaemonProcess,
                                                                tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "load", policy={"auto_approve": {"max_consecutive": 0}},
                               files={"README.md": "hello\n"})
    errors: list[str] = []

    def client_run(index: int) -> None:
        with Client(daemon.socket_path, timeout=60) as client:
            session_id = open_session(client, workspace, select=False)
            for n in range(200):
                request_id = f"{index}-{n}"
                client.send(protocol.request(protocol.TOOLS_AUTHORIZE, {
                    "session_id": session_id, "tool": "read_file",
                    "args": {"path": "README.md", "start_line": n + 1}}, id=request_id))
                message = client.read_message(60)
                if message.get("id") != request_id or message["result"]["decision"] != "allow":
                    errors.append(f"{request_id}: {message}")

    threads = [threading.Thread(target=client_run, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []


def test_signal_int_also_stops_cleanly(short_dir: Path) -> None:
    daemon = DaemonProcess(short_dir / "i.sock", short_dir / "state").start()
    assert daemon.process is not None
    daemon.process.send_signal(signal.SIGINT)
    assert daemon.process.wait(10) == 0 and not daemon.socket_path.exists()
