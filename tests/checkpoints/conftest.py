"""Fixtures for checkpoint tests: a small workspace with a .gitignore, and stores kept outside it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.checkpoints import CheckpointStore

StoreFactory = Callable[..., CheckpointStore]


def write(root: Path, rel: str, text: str | bytes, mode: int | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    if mode is not None:
        os.chmod(path, mode)
    return path


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root except .git folders, with its content: to compare workspaces."""
    found: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(folder) / name
            found[path.relative_to(root).as_posix()] = (
                os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return found


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "README.md", "# demo\n")
    write(root, "src/app.py", "print('hi')\n")
    write(root, "src/util.py", "def f():\n    return 1\n")
    write(root, "debug.log", "noise\n")
    write(root, "build/out.bin", b"\0\1\2")
    return root


@pytest.fixture
def make_store(tmp_path: Path) -> Iterator[StoreFactory]:
    opened: list[CheckpointStore] = []

    def factory(root: Path, **kwargs: Any) -> CheckpointStore:
        kwargs.setdefault("state_dir", tmp_path / "state")
        store = CheckpointStore(root, **kwargs)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(ws: Path, make_store: StoreFactory) -> CheckpointStore:
    return make_store(ws)


@contextmanager
def overflowed(ws: Path, store: CheckpointStore) -> Iterator[None]:
    """The store's watcher queue overflows, then the block runs (its events are lost): the
    reading thread waits on the lock while two files of the `ws` fixture are touched in turn
    (so no two events coalesce) past the kernel's queue length."""
    queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if queued > 200_000:
        pytest.skip("the inotify queue is too long to overflow in a test")
    tracker = store._tracker
    assert tracker is not None
    with tracker._lock:  # type: ignore[union-attr]
        for _ in range(queued // 2 + 10):
            os.utime(ws / "README.md")
            os.utime(ws / "src/util.py")
        yield
