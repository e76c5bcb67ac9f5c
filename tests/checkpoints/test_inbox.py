"""The inbox: a small checkpoint's blobs ride in its manifest transaction instead of new files,
and are moved into git by upkeep and at close; nothing in them is ever lost or trusted blindly."""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CorruptStore
from intentd.daemon.checkpoints.inbox import MOVE_BLOBS

from .conftest import StoreFactory, write


def store_files(state: Path) -> set[str]:
    return {os.path.join(folder, name) for folder, _dirs, names in os.walk(state / "git")
            for name in names}


def test_a_single_file_checkpoint_creates_no_file_and_restores(ws: Path,
                                                                make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    store.create(None, label="baseline")
    before, rows = store_files(store.state_dir), store._manifest.inbox_rows
    write(ws, "src/app.py", "version 1\n")
    first = store.create(["src/app.py"], label="edit 1")
    write(ws, "src/app.py", "version 2\n")
    store.create(["src/app.py"], label="edit 2")
    write(ws, "src/app.py", "version 3\n")
    assert store_files(store.state_dir) == before  # the blobs are rows, not loose objects
    assert store._manifest.inbox_rows == rows + 2
    store.restore(first.id)
    assert (ws / "src/app.py").read_text() == "version 1\n"
    assert [d.path for d in store.diff(first.id, against="next")] == ["src/app.py"]


def test_another_process_reads_blobs_still_in_the_inbox(ws: Path, make_store: StoreFactory) -> None:
    daemon = make_store(ws, watch=False)
    write(ws, "src/app.py", "kept in the inbox\n")
    daemon.create(["src/app.py"], label="edit")
    write(ws, "src/app.py", "the agent's version\n")
    script = ("import sys\nfrom intentd.daemon.checkpoints import CheckpointStore\n"
              "s = CheckpointStore(sys.argv[1], sys.argv[2], watch=False)\n"
              "s.restore(s.list()[-1].id)\n")
    subprocess.run([os.environ.get("PYTHON", "python"), "-c", script, str(ws),
                    str(daemon.state_dir)], check=True, timeout=60)
    assert (ws / "src/app.py").read_text() == "kept in the inbox\n"


def test_upkeep_moves_a_full_inbox_into_git_with_deltas(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    target = write(ws, "notes.txt", "".join(f"line {i}\n" for i in range(400)))
    ids = []
    for i in range(MOVE_BLOBS):
        ids.append(store.create(["notes.txt"], label=f"edit {i}").id)
        target.write_text(target.read_text().replace(f"line {i}\n", f"edited {i}\n"))
    store.wait_for_upkeep()
    assert store._manifest.inbox_rows == 0
    packs = list((store.state_dir / "git/objects/pack").glob("*.pack"))
    verify = subprocess.run(["git", f"--git-dir={store.state_dir / 'git'}", "verify-pack", "-v",
                             str(packs[0])], capture_output=True, text=True, check=True).stdout
    assert "chain length" in verify  # each version a delta of the one before
    assert sum(p.stat().st_size for p in packs) < 40 * 4096  # not 256 copies of 4 kB
    store.restore(ids[3])
    assert "line 3\n" in target.read_text() and "edited 2\n" in target.read_text()


def test_a_pruned_checkpoint_takes_its_blobs_out_of_the_inbox(ws: Path,
                                                              make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False, max_store_bytes=256 * 1024)
    target = write(ws, "data.txt", "")
    for i in range(12):  # 100 kB that does not compress each: the cap holds two or three
        target.write_text(os.urandom(50_000).hex())
        store.create(["data.txt"], label=f"edit {i}")
    store.wait_for_upkeep()
    kept = store.list()
    assert 0 < len(kept) < 12 and kept[-1].label == "edit 11"
    assert store._manifest.inbox_rows <= len(kept)
    assert store.disk_usage() <= 256 * 1024 + 128 * 1024  # the cap, and a database's free pages


def test_a_damaged_inbox_row_is_never_restored(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    write(ws, "src/app.py", "saved\n")
    cp = store.create(["src/app.py"], label="edit")
    write(ws, "src/app.py", "the agent's version\n")
    store._manifest._db.execute("UPDATE inbox SET data = zeroblob(12)")
    with pytest.raises(CorruptStore, match="damaged"):
        store.restore(cp.id)
    assert (ws / "src/app.py").read_text() == "the agent's version\n"
    with pytest.raises(CorruptStore, match="damaged"):
        store.diff(cp.id)


def test_a_stop_never_waits_for_a_busy_store_and_the_inbox_stays(ws: Path,
                                                                 make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    write(ws, "src/app.py", "kept in the inbox\n")
    cp = store.create(["src/app.py"], label="edit")
    other = os.open(store.state_dir / "lock", os.O_RDWR)  # another process's hold, as flock sees it
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        started = time.monotonic()
        store.close()
        assert time.monotonic() - started < 1.0  # a busy store waits up to 60 s for a writer
    finally:
        os.close(other)
    write(ws, "src/app.py", "the agent's version\n")
    again = make_store(ws, watch=False)
    assert again._manifest.inbox_rows >= 1
    again.restore(cp.id)
    assert (ws / "src/app.py").read_text() == "kept in the inbox\n"
