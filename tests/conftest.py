"""Shared fixtures: state in temp folders, short socket folders, an engine and a ready workspace."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from intentd.daemon.client import Client
from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import DaemonProcess, make_workspace


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real user's state, config or runtime folders."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg-runtime"))
    monkeypatch.chdir(tmp_path)  # a test that runs something in "." never touches the checkout


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short temp folder: Unix socket paths must stay under 108 bytes."""
    path = Path(tempfile.mkdtemp(prefix="itd-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", files={"src/app.py": "print('hi')\n",
                                                  "README.md": "# demo\n"})


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    eng = Engine(tmp_path / "state", checkpoints=False)
    yield eng
    eng.close()


@pytest.fixture
def daemon(short_dir: Path) -> Iterator[DaemonProcess]:
    """A real daemon on a short socket path, its state in the same temp folder."""
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as process:
        yield process


@contextmanager
def clients_of(daemon: DaemonProcess) -> Iterator[Callable[[str], Client]]:
    """make(name): a client of the daemon, initialized under that client name; all are closed
    when the block ends."""
    clients: list[Client] = []

    def make(name: str = "test") -> Client:
        client = Client(daemon.socket_path, timeout=30).connect()
        client.initialize(name)
        clients.append(client)
        return client

    try:
        yield make
    finally:
        for client in clients:
            client.close()


@pytest.fixture
def connect(daemon: DaemonProcess) -> Iterator[Callable[[str], Client]]:
    """connect(name): a client of the daemon, initialized under that client name."""
    with clients_of(daemon) as make:
        yield make
