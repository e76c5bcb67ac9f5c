"""Watches one session's approvals: says which waits for a person, or approves it (demo --yes)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TextIO

from intentd.daemon import protocol
from intentd.daemon.client import Client, DaemonUnavailable


class ApprovalWatcher:
    """On its own connection: approvals of one session are announced (and approved with --yes)."""

    def __init__(self, socket_path: Path | None, session_id: str, approve: bool, out: TextIO):
        self.session_id, self.approve, self.out = session_id, approve, out
        self.client = Client(socket_path, timeout=10).connect()
        self.client.initialize("intentd-approval-watcher")
        self.client.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED]})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="approval-watcher", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                note = self.client.next_notification(timeout=0.2)
            except (DaemonUnavailable, OSError):
                return
            if note is None or note.get("method") != protocol.APPROVALS_REQUESTED:
                continue
            request = note.get("params") or {}
            if request.get("session_id") == self.session_id:
                self._on_request(str(request.get("id")))

    def _on_request(self, approval_id: str) -> None:
        if not self.approve:
            self.out.write(f"   ... waiting for a person: approve {approval_id} in the desktop "
                           f"app, or run `intentd approve {approval_id}` in another terminal\n")
            self.out.flush()
            return
        self.out.write(f"   ... {approval_id} is approved by the demo script (--yes)\n")
        self.out.flush()
        self.client.send(protocol.request(protocol.APPROVALS_RESPOND, {
            "approval_id": approval_id, "decision": protocol.APPROVE}, id=f"watch-{approval_id}"))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.client.close()
