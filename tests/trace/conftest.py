"""A real daemon per test, on a short socket path, and a workspace whose edits need no approval."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace

EDITS_UNASKED = {"auto_approve": {"edit": True, "max_consecutive": 1000}}


@pytest.fixture
def client(daemon: DaemonProcess) -> Iterator[Client]:
    with Client(daemon.socket_path, timeout=20) as connected:
        connected.initialize("trace-test")
        yield connected


@pytest.fixture
def two_intents(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", make_intent("INT-1", name="parser"),
                          make_intent("INT-2", name="logging"), policy=EDITS_UNASKED,
                          files={"src/app.py": "print('hi')\n"})
