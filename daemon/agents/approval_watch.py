"""Watches the daemon's approval requests on its own connection and hands each to a callback."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from intentd.daemon import protocol
from intentd.daemon.agents.gateway import GatewayError
from intentd.daemon.client import Client, DaemonUnavailable, RpcError


@dataclass(frozen=True)
class Reply:
    """An answer to one approval request."""

    approve: bool
    feedback: str | None = None


# Called on the watcher's thread with the request (docs/protocol.md `approvals/requested`);
# a Reply answers it, None leaves it to someone else.
OnRequest = Callable[[dict[str, Any]], Reply | None]


class ApprovalWatcher:
    """Requests of one session (every session when `session_id` is None) go to `on_request`.

    The daemon knows the answering connection by `client_name` (its `initialize` name). A
    watcher that only says where to answer is no `approver`: with none connected, an agent that
    has its own prompt is asked there rather than left waiting."""

    def __init__(self, socket_path: Path | None, session_id: str | None, on_request: OnRequest,
                 *, client_name: str = "intentd-approval-watcher", timeout: float = 10,
                 approver: bool = True) -> None:
        self.session_id, self.on_request = session_id, on_request
        self.client = Client(socket_path, timeout=timeout)
        try:
            self.client.connect()
            self.client.initialize(client_name)
            self.client.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED],
                                                         "approver": approver})
        except (DaemonUnavailable, RpcError, TimeoutError) as exc:
            self.client.close()
            raise GatewayError(f"cannot watch the daemon's approvals: {exc}") from None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="approval-watcher", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                note = self.client.next_notification(timeout=0.1)
            except (DaemonUnavailable, OSError):
                return
            if note is None or note.get("method") != protocol.APPROVALS_REQUESTED:
                continue
            request = note.get("params") or {}
            if self.session_id is None or request.get("session_id") == self.session_id:
                self._answer(request, self.on_request(request))

    def _answer(self, request: dict[str, Any], reply: Reply | None) -> None:
        if reply is None:
            return
        params: dict[str, Any] = {"approval_id": request.get("id"),
                                  "decision": protocol.APPROVE if reply.approve else protocol.REJECT}
        if reply.feedback:
            params["feedback"] = reply.feedback
        try:
            self.client.send(protocol.request(protocol.APPROVALS_RESPOND, params,
                                              id=f"watch-{request.get('id')}"))
        except DaemonUnavailable:
            self._stop.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.client.close()


def announce(out: TextIO) -> OnRequest:
    """Says where a person can answer; answers nothing itself."""
    def on_request(request: dict[str, Any]) -> Reply | None:
        approval_id = request.get("id")
        out.write(f"   ... waiting for a person: approve {approval_id} in the desktop app, or run "
                  f"`intentd approve {approval_id}` in another terminal\n")
        out.flush()
        return None
    return on_request


def approve_as(label: str, out: TextIO) -> OnRequest:
    """Approves every request, saying so (the scripted demo with --yes)."""
    def on_request(request: dict[str, Any]) -> Reply | None:
        out.write(f"   ... {request.get('id')} is approved by {label}\n")
        out.flush()
        return Reply(True)
    return on_request
