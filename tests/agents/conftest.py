"""A real daemon on a short socket path, and a "person" client that answers its approvals."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess


@pytest.fixture
def daemon(short_dir: Path, tmp_path: Path) -> Iterator[DaemonProcess]:
    with DaemonProcess(short_dir / "d.sock", tmp_path / "daemon-state") as process:
        yield process


class Person:
    """Approves (or rejects) every approval request of the daemon, on its own connection."""

    def __init__(self, socket_path: Path, approve: bool = True, feedback: str | None = None):
        self.client = Client(socket_path, timeout=20).connect()
        self.client.initialize("test-person")
        self.client.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED]})
        self.approve, self.feedback = approve, feedback
        self.seen: list[dict[str, object]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            note = self.client.next_notification(timeout=0.1)
            if note is None or note.get("method") != protocol.APPROVALS_REQUESTED:
                continue
            request = note["params"]
            self.seen.append(request)
            answer = {"approval_id": request["id"],
                      "decision": protocol.APPROVE if self.approve else protocol.REJECT}
            if self.feedback:
                answer["feedback"] = self.feedback
            message = protocol.request(protocol.APPROVALS_RESPOND, answer, id=f"r-{request['id']}")
            self.client.send(message)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.client.close()


@pytest.fixture
def person(daemon: DaemonProcess) -> Iterator[Person]:
    answering = Person(daemon.socket_path)
    yield answering
    answering.close()
