"""A real daemon per test on a short socket path, and clients that speak to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess


@pytest.fixture
def daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as process:
        yield process


@pytest.fixture
def connect(daemon: DaemonProcess) -> Iterator[Callable[[str], Client]]:
    clients: list[Client] = []

    def make(name: str = "test") -> Client:
        client = Client(daemon.socket_path, timeout=20).connect()
        client.initialize(name)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
