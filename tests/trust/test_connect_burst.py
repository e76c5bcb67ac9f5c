"""A burst of simultaneous connects: none is turned away, and the hook adapter allows them all."""

from __future__ import annotations

import errno
import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.agents.deadline import Deadline
from intentd.daemon.agents.hooks.claude import ADAPTER
from intentd.daemon.agents.hooks.core import HookOptions, handle
from intentd.daemon.client import Client
from intentd.daemon.server.server import LISTEN_BACKLOG
from intentd.daemon.setup.units import SOCKET_UNIT, render_units
from intentd.daemon.testing import DaemonProcess, write_policy

BURST = 300


@contextmanager
def stopped(daemon: DaemonProcess, seconds: float = 0.5) -> Iterator[None]:
    """The daemon frozen (SIGSTOP) while the burst arrives, so every connect waits in its
    listen queue; thawed after `seconds` in the background."""
    assert daemon.process is not None
    daemon.process.send_signal(signal.SIGSTOP)
    thaw = threading.Timer(seconds, daemon.process.send_signal, (signal.SIGCONT,))
    thaw.start()
    try:
        yield
    finally:
        thaw.join()
        daemon.process.send_signal(signal.SIGCONT)


def test_the_listen_queue_holds_a_burst_of_raw_connects(daemon: DaemonProcess) -> None:
    """No retry here: each connect is made once, while the daemon accepts none."""
    refused: list[int] = []
    socks: list[socket.socket] = []
    with stopped(daemon):
        for _ in range(BURST):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(str(daemon.socket_path))
            except OSError as exc:
                refused.append(exc.errno or 0)
            socks.append(sock)
    for sock in socks:
        sock.close()
    assert refused == [], f"{len(refused)} of {BURST} connects refused ({errno.errorcode.get(refused[0])})"


def test_a_socket_systemd_listens_on_has_the_same_backlog() -> None:
    """Socket-activated, the daemon never calls listen(): systemd does, with the unit's Backlog=
    (older systemd defaults to 128)."""
    text = render_units(["/x/intentd"])[SOCKET_UNIT]
    backlog = [line.partition("=")[2] for line in text.splitlines() if line.startswith("Backlog=")]
    assert backlog == [str(LISTEN_BACKLOG)]


def test_a_client_retries_a_full_queue_briefly(short_dir: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(short_dir / "busy.sock"))
    listener.listen(0)
    filler = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(4)]
    for sock in filler:
        sock.setblocking(False)
        try:
            sock.connect(str(short_dir / "busy.sock"))
        except OSError:
            pass  # the queue is full now

    def drain() -> None:
        time.sleep(0.3)
        listener.setblocking(False)
        while True:
            try:
                listener.accept()
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                return

    threading.Thread(target=drain, daemon=True).start()
    started = time.monotonic()
    Client(short_dir / "busy.sock", timeout=5).connect().close()
    assert time.monotonic() - started >= 0.2, "the connect waited for the queue to drain"
    listener.close()
    for sock in filler:
        sock.close()


def test_a_burst_of_hook_calls_is_allowed_every_time(daemon: DaemonProcess, ws: Path) -> None:
    """BURST parallel Read calls of one Claude Code session, arriving while the daemon is busy."""
    write_policy(ws, {"auto_approve": {"read": True, "max_consecutive": 0}})  # no check-ins
    for index in range(BURST + 1):  # one file each: the same read again and again is stopped
        (ws / "src" / f"f{index}.txt").write_text(f"{index}\n")
    options = HookOptions(socket=daemon.socket_path, workspace=ws, approval_timeout=30.0,
                          hook_timeout=60.0)

    def read(index: int) -> dict[str, Any]:
        event = {"session_id": "burst", "cwd": str(ws), "hook_event_name": "PreToolUse",
                 "tool_name": "Read", "tool_input": {"file_path": str(ws / "src" / f"f{index}.txt")},
                 "tool_use_id": f"toolu_{index}"}
        try:
            reply = handle(ADAPTER, options, event, deadline=Deadline.after(50.0))
            return dict(json.loads(reply.stdout)) if reply.stdout else {}
        except Exception as exc:  # noqa: BLE001 - counted as not allowed
            return {"error": repr(exc)}

    assert _verdict(read(0)) == "allow"  # the session's keeper is up before the burst
    answers: list[dict[str, Any]] = [{}] * BURST
    threads = [threading.Thread(target=lambda i=i: answers.__setitem__(i, read(i + 1)))
               for i in range(BURST)]
    with stopped(daemon):
        for thread in threads:
            thread.start()
    for thread in threads:
        thread.join(60)
    verdicts = [_verdict(a) for a in answers]
    assert verdicts.count("allow") == BURST, {v: verdicts.count(v) for v in set(verdicts)}
    with Client(daemon.socket_path) as client:
        assert client.call(protocol.WORKSPACES_LIST)["workspaces"]


def _verdict(answer: dict[str, Any]) -> str:
    output = answer.get("hookSpecificOutput") or {}
    return str(output.get("permissionDecision") or answer.get("error") or "none")
