"""Warm-up: a workspace's first complete checkpoint, read in the background, never blocking a call."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from intentd.daemon.checkpoints import CheckpointStore

from .conftest import tree, write

LONG_AGO = time.time() - 3600


def aged(root: Path) -> None:
    """Files last changed an hour ago: the stat cache trusts them (fresh ones are always re-read)."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (LONG_AGO, LONG_AGO))


def test_warm_up_takes_the_baseline_and_spares_the_first_command_a_full_read(
        ws: Path, store: CheckpointStore) -> None:
    aged(ws)
    seen: list[tuple[int, int]] = []
    baseline = store.warm_up(lambda done, total: seen.append((done, total)))
    assert baseline is not None and baseline.label.startswith("baseline")
    assert baseline.files == ()  # brief: it holds every file, which get() lists
    assert set(store.get(baseline.id).files) == {".gitignore", "README.md", "src/app.py", "src/util.py"}
    assert seen[-1] == (4, 4) and store.warm_up_progress is None
    assert store.warm_up() is None  # once is enough
    write(ws, "src/app.py", "edited\n")
    cp = store.create(None, label="before a command")
    assert cp.files == ("src/app.py",) and cp.coverage == ""
    store.restore(baseline.id)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"


def test_a_file_checkpoint_does_not_wait_for_the_warm_up(ws: Path, store: CheckpointStore) -> None:
    aged(ws)
    done: list[str] = []

    def meanwhile(_done: int, _total: int) -> None:  # runs on the warm-up, mid-way
        edit = threading.Thread(target=lambda: done.append(
            store.create(["src/util.py"], label="before write_file").id))
        edit.start()
        edit.join(timeout=10)
        write(ws, "README.md", "changed after it was read, before the baseline\n")

    baseline = store.warm_up(meanwhile)
    assert done, "the file checkpoint waited for the warm-up"
    assert baseline is not None
    write(ws, "README.md", "later\n")
    store.restore(baseline.id)
    assert (ws / "README.md").read_text() == "changed after it was read, before the baseline\n"


def test_a_command_checkpoint_during_the_warm_up_is_complete(ws: Path, store: CheckpointStore) -> None:
    aged(ws)
    first: list[str] = []

    def command(_done: int, _total: int) -> None:
        first.append(store.create(None, label="before a command").id)

    assert store.warm_up(command) is None  # the command's checkpoint was the complete one
    write(ws, "new.txt", "made by the command\n")
    before = tree(ws)
    assert store.create(None, label="next").files == ("new.txt",)
    store.restore(first[0])
    assert set(before) - set(tree(ws)) == {"new.txt"}
