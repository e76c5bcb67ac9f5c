"""A real daemon on a short socket path, a "person" who answers its approvals, a silent daemon."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.agents.approval_watch import ApprovalWatcher, Reply
from intentd.daemon.testing import DaemonProcess


@pytest.fixture
def daemon(short_dir: Path, tmp_path: Path) -> Iterator[DaemonProcess]:
    with DaemonProcess(short_dir / "d.sock", tmp_path / "daemon-state") as process:
        yield process


class Person:
    """Approves (or rejects) every approval request of the daemon, on its own connection."""

    def __init__(self, socket_path: Path, approve: bool = True, feedback: str | None = None):
        self.reply = Reply(approve, feedback)
        self.seen: list[dict[str, Any]] = []
        self.watcher = ApprovalWatcher(socket_path, None, self._on_request,
                                       client_name="test-person", timeout=20)

    def _on_request(self, request: dict[str, Any]) -> Reply:
        self.seen.append(request)
        return self.reply

    def close(self) -> None:
        self.watcher.close()


@pytest.fixture
def person(daemon: DaemonProcess) -> Iterator[Person]:
    answering = Person(daemon.socket_path)
    yield answering
    answering.close()


class SilentDaemon:
    """A socket that takes connections and never answers: a stuck daemon."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(16)
        self.sock.setblocking(False)
        self.accepted: list[socket.socket] = []

    def connections(self) -> int:
        """How many clients have connected so far (each is kept open, unanswered)."""
        while True:
            try:
                self.accepted.append(self.sock.accept()[0])
            except BlockingIOError:
                return len(self.accepted)

    def close(self) -> None:
        for conn in self.accepted:
            conn.close()
        self.sock.close()


@pytest.fixture
def silent(short_dir: Path) -> Iterator[SilentDaemon]:
    stuck = SilentDaemon(short_dir / "silent.sock")
    yield stuck
    stuck.close()
