"""The object store: git-readable, loose objects packed with deltas, dead blobs compacted away."""

from __future__ import annotations

import errno
import os
import random
import subprocess
import threading
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import DiskFull, objects
from intentd.daemon.checkpoints.inbox import MOVE_BLOBS
from intentd.daemon.checkpoints.upkeep import LOOSE_LIMIT, Upkeep

from .conftest import StoreFactory, write


def git_dir(store_dir: Path) -> list[str]:
    return ["git", f"--git-dir={store_dir / 'git'}"]


def edit(path: Path, rng: random.Random) -> None:
    """Replace 1 KiB of a 4 KiB text file, as the benchmark does."""
    words = [f"word{rng.randrange(500)}" for _ in range(200)]
    text = path.read_text()
    at = rng.randrange(0, 3072)
    path.write_text(text[:at] + " ".join(words)[:1024] + text[at + 1024:])


def test_store_is_a_git_repository_git_can_read(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    store.create(["src/app.py"], label="one")
    store.close()  # the inbox's blobs go into git
    sha = subprocess.run([*git_dir(store.state_dir), "hash-object", str(ws / "src/app.py")],
                         capture_output=True, text=True, check=True).stdout.strip()
    shown = subprocess.run([*git_dir(store.state_dir), "cat-file", "-p", sha],
                           capture_output=True, text=True, check=True).stdout
    assert shown == (ws / "src/app.py").read_text()


def test_loose_objects_are_packed_with_deltas(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    rng = random.Random(3)
    target = write(ws, "notes.txt", " ".join(f"w{rng.randrange(999)}" for _ in range(800))[:4096])
    versions, ids = [], []
    for i in range(LOOSE_LIMIT + 6):
        versions.append(target.read_text())
        ids.append(store.create(["notes.txt"], label=f"edit {i}").id)
        edit(target, rng)
    packs = list((store.state_dir / "git/objects/pack").glob("*.pack"))
    assert packs and store._blobs.loose_count < LOOSE_LIMIT
    verify = subprocess.run([*git_dir(store.state_dir), "verify-pack", "-v", str(packs[0])],
                            capture_output=True, text=True, check=True).stdout
    assert "chain length" in verify  # versions are stored as deltas of each other
    store.restore(ids[0])
    assert target.read_text() == versions[0]
    assert store.disk_usage() < len(versions) * 4096  # far less than one full copy per version


def test_dead_blobs_in_packs_are_compacted_away(ws: Path, make_store: StoreFactory) -> None:
    for i in range(80):  # the first checkpoint writes these as one pack
        write(ws, f"gen/{i}.bin", os.urandom(8 * 1024))
    store = make_store(ws, watch=False, max_store_bytes=1024 * 1024)
    store.create(None, label="baseline")
    for i in range(80):
        write(ws, f"gen/{i}.bin", os.urandom(8 * 1024))
    store.create(None, label="all rewritten")
    for i in range(80):
        write(ws, f"gen/{i}.bin", os.urandom(8 * 1024))
    last = store.create(None, label="rewritten again")
    assert [c.label for c in store.list()] == ["rewritten again"]
    assert store.disk_usage() <= 1024 * 1024
    write(ws, "gen/0.bin", b"changed")
    store.restore(last.id)
    assert len((ws / "gen/0.bin").read_bytes()) == 8 * 1024


def test_a_failing_pack_write_records_nothing(ws: Path, make_store: StoreFactory,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(80):
        write(ws, f"gen/{i}.txt", f"file {i}\n")
    store = make_store(ws, watch=False)
    real_run = subprocess.run

    def full_disk(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        if "fast-import" in args:
            return subprocess.CompletedProcess(args, 128, b"", b"fatal: No space left on device\n")
        return real_run(args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(objects.subprocess, "run", full_disk)
    with pytest.raises(DiskFull):
        store.create(None, label="baseline")
    assert store.list() == []
    assert not list((store.state_dir / "git/objects/pack").glob("*"))
    monkeypatch.undo()
    assert len(store.create(None, label="baseline").files) > 80


def test_a_prune_drops_what_it_must_then_compacts_once(ws: Path, tmp_path: Path, make_store: StoreFactory,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    store = make_store(ws, state_dir=state, watch=False)
    for gen in range(4):  # each generation: 80 new blobs, written as one pack
        for i in range(80):
            write(ws, f"gen/{i}.bin", os.urandom(8 * 1024))
        store.create(None, label=f"gen {gen}")
    store.close()
    repacks: list[object] = []
    real = objects.BlobStore.repack

    def counting(self: objects.BlobStore, *args: object, **kwargs: object) -> None:
        repacks.append(kwargs.get("drop_packs"))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(objects.BlobStore, "repack", counting)
    store = make_store(ws, state_dir=state, watch=False, max_store_bytes=1536 * 1024)
    write(ws, "README.md", "one more checkpoint\n")
    store.create(None, label="over the cap")
    assert [c.label for c in store.list()] == ["gen 3", "over the cap"]  # 3 dropped...
    assert len(repacks) == 1  # ...and one compaction for all of them
    assert store.disk_usage() <= 1536 * 1024


def test_upkeep_runs_beside_the_tool_not_before_it(ws: Path, make_store: StoreFactory,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store(ws, watch=False)
    started, release, threads = threading.Event(), threading.Event(), []
    real = Upkeep.after_checkpoint

    def held(self: Upkeep) -> bool:
        threads.append(threading.current_thread())
        started.set()
        release.wait(5)
        return real(self)

    monkeypatch.setattr(Upkeep, "after_checkpoint", held)
    target = write(ws, "notes.txt", "v0\n")
    for i in range(MOVE_BLOBS):  # one new blob in the inbox each: the last one makes moving due
        target.write_text(f"v{i + 1}\n")
        store.create(["notes.txt"], label=f"edit {i}")
    assert started.wait(5) and threads[0] is not threading.current_thread()
    assert store._manifest.inbox_rows >= MOVE_BLOBS  # create returned before upkeep ran
    release.set()
    assert len(store.list()) == MOVE_BLOBS  # the store's next call waits for it
    assert store._manifest.inbox_rows == 0


def test_a_failed_upkeep_that_dropped_nothing_says_so(ws: Path, make_store: StoreFactory,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store(ws, watch=False)
    store.create(None, label="baseline")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "disk trouble")

    monkeypatch.setattr(objects.BlobStore, "repack", broken)
    monkeypatch.setattr(store._blobs, "loose_count", LOOSE_LIMIT)
    assert store._upkeep.after_checkpoint() is False  # nothing moved: no reload of every entry
