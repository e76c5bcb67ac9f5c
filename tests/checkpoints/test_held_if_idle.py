"""A store is held for brief work on the daemon's event loop only when that waits for no one,
and work holding it never waits on the upkeep its own checkpoint started."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

from intentd.daemon.checkpoints.inbox import MOVE_BLOBS

from .conftest import StoreFactory, write


def in_git(store_dir: Path, path: Path) -> bool:
    """Whether the file's content is an object of the store's git repository."""
    git = ["git", f"--git-dir={store_dir / 'git'}"]
    sha = subprocess.run([*git, "hash-object", str(path)], capture_output=True, text=True,
                         check=True).stdout.strip()
    return subprocess.run([*git, "cat-file", "-e", sha], capture_output=True).returncode == 0


def test_a_store_another_process_holds_is_not_held_for_brief_work(ws: Path,
                                                                  make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    store.create(["src/app.py"], label="opened")
    other = os.open(store.state_dir / "lock", os.O_RDWR)  # an open file of its own: another holder
    fcntl.flock(other, fcntl.LOCK_EX)
    try:
        with store.held_if_idle() as held:
            assert not held
    finally:
        fcntl.flock(other, fcntl.LOCK_UN)
        os.close(other)
    with store.held_if_idle() as held:
        assert held
        write(ws, "src/app.py", "print('edited')\n")
        checkpoint = store.create(["src/app.py"], label="while held")  # its holder never waits on itself
    assert store.get(checkpoint.id).files == ("src/app.py",)


def test_an_upkeep_a_held_store_makes_due_runs_after_the_hold_not_into_a_deadlock(
        ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    for n in range(MOVE_BLOBS - 1):  # one blob short of moving the inbox into git
        write(ws, "src/app.py", f"print({n})\n")
        store.create(["src/app.py"], label=f"edit {n}")
    with store.held_if_idle() as held:
        assert held
        last = write(ws, "src/app.py", "print('the last')\n")
        store.create(["src/app.py"], label="the inbox is full: its move is due")
        write(ws, "src/util.py", "def f():\n    return 2\n")
        second = store.create(["src/util.py"], label="then another")  # waits for no upkeep
        assert not in_git(store.state_dir, last)  # the upkeep has not run meanwhile
    store.wait_for_upkeep()
    assert in_git(store.state_dir, last)  # and did once the store was let go
    assert store.get(second.id).files == ("src/util.py",)
