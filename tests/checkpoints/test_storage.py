"""Storage: outside the workspace, size cap per file, storage cap with pruning, bad stores."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.object_store import DiskObjectStore

from intentd.daemon.checkpoints import (
    CheckpointError,
    CheckpointStore,
    CorruptStore,
    DiskFull,
    UnknownCheckpoint,
    WorkspaceMissing,
    upkeep,
)
from intentd.daemon.checkpoints.inbox import MAX_BLOB_BYTES
from intentd.daemon.checkpoints.objects import DELTA_MAX_BYTES, BlobStore, blob_sha, make_blob
from intentd.daemon.utils.statedir import checkpoints_dir, state_home

from .conftest import StoreFactory, tree, write


def test_default_store_lives_in_the_xdg_state_folder(ws: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    with CheckpointStore(ws, watch=False) as store:
        store.create(["README.md"], label="one")
        assert store.state_dir == checkpoints_dir(ws)  # where the engine and the CLI look
        assert store.state_dir.is_relative_to(tmp_path / "xdg" / "intentd" / "workspaces")
        assert (store.state_dir / "git" / "objects").is_dir()
    assert sorted(os.listdir(ws)) == [".gitignore", "README.md", "build", "debug.log", "src"]


def test_files_over_the_size_cap_are_skipped_and_reported(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, max_file_bytes=1024)
    write(ws, "big.bin", b"x" * 4096)
    cp = store.create(None, label="baseline")
    assert "big.bin" not in cp.files
    assert dict(cp.skipped)["big.bin"] == "over 1 KiB size cap"
    named = store.create(["big.bin"], label="edit big")
    assert dict(named.skipped)["big.bin"] == "over 1 KiB size cap"


def test_storage_cap_prunes_oldest_first(ws: Path, make_store: StoreFactory) -> None:
    cap = 3 * 2**20
    store = make_store(ws, max_store_bytes=cap, watch=False)
    ids = []
    for i in range(12):
        write(ws, "data.bin", os.urandom(400 * 1024))  # incompressible: 400 KiB per version
        ids.append(store.create(["data.bin"], label=f"v{i}").id)
    kept = [c.id for c in store.list()]
    assert kept == ids[-len(kept):] and 1 < len(kept) < len(ids)  # the newest ones, in order
    assert store.disk_usage() <= cap
    with pytest.raises(UnknownCheckpoint, match="pruned"):
        store.get(ids[0])
    before = (ws / "data.bin").read_bytes()
    write(ws, "data.bin", b"later")
    store.restore(kept[-1])
    assert (ws / "data.bin").read_bytes() == before


def test_pruning_keeps_the_state_a_later_checkpoint_needs(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, max_store_bytes=2 * 2**20, watch=False)
    store.create(None, label="baseline")  # holds README.md, which never changes again
    for i in range(8):
        write(ws, "data.bin", os.urandom(300 * 1024))
        store.create(None, label=f"v{i}")
    store.wait_for_upkeep()
    labels = [c.label for c in store.list()]
    assert "v0" not in labels and labels[-1] == "v7"
    # the baseline frees nothing when dropped (README.md is still as it holds it): it stays
    assert labels[0] == "baseline"
    write(ws, "README.md", "changed\n")
    store.restore(store.list()[-1].id)
    assert (ws / "README.md").read_text() == "# demo\n"


def person_history(ws: Path, store: CheckpointStore) -> list[str]:
    """The person's checkpoints before an agent's work: a baseline, then three small edits."""
    ids = [store.create(None, label="baseline").id]
    for i in range(3):
        write(ws, "README.md", f"# demo, edit {i}\n")
        ids.append(store.create(None, label=f"person {i}").id)
    return ids


def test_one_command_filling_the_store_does_not_cost_the_person_their_history(
        ws: Path, make_store: StoreFactory) -> None:
    """An agent's command writes more than the cap (every file under the size cap) and leaves it
    there. Dropping older checkpoints cannot free what the workspace holds now, so none is."""
    store = make_store(ws, max_store_bytes=3 * 2**20, max_file_bytes=2**20, watch=False)
    ids = person_history(ws, store)
    for i in range(5):
        write(ws, f"junk/{i}.bin", os.urandom(800 * 1024))  # 4 MB in all, over the 3 MiB cap
    store.create(None, label="after the agent's command")
    store.wait_for_upkeep()
    assert [c.id for c in store.list()][:4] == ids
    store.restore(ids[0])
    assert not list((ws / "junk").glob("*.bin"))
    assert (ws / "README.md").read_text() == "# demo\n"


@pytest.mark.parametrize("names", [["junk.bin"], ["a.bin", "b.bin"]])
def test_an_agent_churning_the_store_loses_its_own_checkpoints_first(
        ws: Path, make_store: StoreFactory, names: list[str]) -> None:
    """Command after command, an agent rewrites a big file (or two, by turns, so that no one
    checkpoint's drop frees anything alone): the checkpoints keeping its old versions stored
    are dropped, not the person's older, small ones."""
    cap = 3 * 2**20
    store = make_store(ws, max_store_bytes=cap, max_file_bytes=2**20, watch=False)
    ids = person_history(ws, store)
    for i in range(10):
        write(ws, names[i % len(names)], os.urandom(700 * 1024))
        store.create(None, label=f"agent {i}")
    store.wait_for_upkeep()
    labels = [c.label for c in store.list()]
    assert labels[:4] == ["baseline", "person 0", "person 1", "person 2"]
    assert "agent 0" not in labels and labels[-1] == "agent 9"
    assert store.disk_usage() <= cap
    store.restore(ids[1])
    assert (ws / "README.md").read_text() == "# demo, edit 0\n"
    assert not any((ws / name).exists() for name in names)


def test_every_checkpoint_a_prune_leaves_restores_the_workspace_it_saved(
        ws: Path, make_store: StoreFactory) -> None:
    """Checkpoints dropped from the middle fold what the next one did not save again into it:
    each one left still brings back exactly the files it saw."""
    store = make_store(ws, max_store_bytes=3 * 2**20, max_file_bytes=2**20, watch=False)
    saved = {store.create(None, label="baseline").id: tree(ws)}
    for i in range(12):
        if i % 3 == 0:
            write(ws, f"notes/{i}.md", f"note {i}\n")
        if i % 4 == 1:
            write(ws, "README.md", f"# demo {i}\n")
        write(ws, "big.bin" if i % 2 else "other.bin", os.urandom(600 * 1024))
        saved[store.create(None, label=f"step {i}").id] = tree(ws)
    store.wait_for_upkeep()
    left = [c.id for c in store.list()]
    assert 2 < len(left) < len(saved) and left[0] == next(iter(saved))
    for checkpoint_id in reversed(left):
        store.restore(checkpoint_id)
        assert tree(ws) == saved[checkpoint_id], checkpoint_id


def test_a_checkpoint_dropped_between_keeps_an_earlier_restore_deleting_a_tools_new_file(
        ws: Path, make_store: StoreFactory) -> None:
    """A file tool's checkpoint records the file it will make as absent; once that checkpoint
    is dropped (the next one saved the file), a restore of an earlier checkpoint must still
    delete it."""
    store = make_store(ws, max_store_bytes=3 * 2**20, max_file_bytes=2**20, watch=False)
    person = store.create(None, label="person")
    for name in ("q1", "q2"):
        write(ws, name, os.urandom(900 * 1024))
    store.create(None, label="a command")
    store.create(["p.txt", "q1", "q2"], label="before write_to_file p.txt")
    write(ws, "p.txt", "the agent's new file\n")
    for name in ("q1", "q2"):
        write(ws, name, os.urandom(900 * 1024))
    store.create(None, label="the next command")
    store.wait_for_upkeep()
    assert "before write_to_file p.txt" not in [c.label for c in store.list()]
    done = store.restore(person.id)
    assert "p.txt" in done.deleted and not (ws / "p.txt").exists()


def test_after_drops_a_restore_never_claims_a_state_it_did_not_record(
        ws: Path, make_store: StoreFactory) -> None:
    """A file there but unrecorded at the first checkpoint, saved by the second, deleted by
    the third's command, made again: unpruned, a restore of the first names it and leaves it.
    Dropping the second and third made the third's 'absent' its first entry, and the restore
    deleted the person's file."""
    hour_ago = time.time_ns() - 3600 * 10**9
    write(ws, "f.txt", "the person's file\n")
    os.utime(ws / "f.txt", ns=(hour_ago, hour_ago))
    store = make_store(ws, watch=False)
    first = store.create(["README.md"], label="a file tool on README.md")
    write(ws, "f.txt", "the person's file, edited after\n")
    second = store.create(["f.txt"], label="a file tool on f.txt")
    (ws / "f.txt").unlink()
    third = store.create(None, label="a command")
    write(ws, "f.txt", "made again\n")
    store.create(["f.txt"], label="a file tool on f.txt again")
    with store._lock.hold():
        for checkpoint in (second, third):
            store._manifest.drop(int(checkpoint.id[3:]))
    done = store.restore(first.id)
    assert "f.txt" not in done.deleted and (ws / "f.txt").read_text() == "made again\n"
    assert [path for path, _why in done.skipped] == ["f.txt"]


def test_hard_links_do_not_stretch_the_store_past_its_cap(ws: Path, make_store: StoreFactory) -> None:
    """The newest state counts each blob once: twenty names of one file are one file's bytes."""
    cap = 3 * 2**20
    store = make_store(ws, max_store_bytes=cap, max_file_bytes=2**20, watch=False)
    store.create(None, label="person")
    write(ws, "links/0", os.urandom(2**20 - 1))
    for i in range(1, 20):
        os.link(ws / "links/0", ws / f"links/{i}")
    store.create(None, label="links")
    for i in range(12):
        write(ws, "churn.bin", os.urandom(900 * 1024))
        store.create(None, label=f"churn {i}")
    store.wait_for_upkeep()
    assert store.disk_usage() <= cap
    assert store.list()[0].label == "person"


def test_a_file_saved_again_unchanged_does_not_make_the_persons_checkpoint_go_first(
        ws: Path, make_store: StoreFactory) -> None:
    """A file tool naming the person's big file, which it does not change, saves the same
    content again: that keeps nothing more alive, so the person's checkpoint has no share."""
    store = make_store(ws, max_store_bytes=3 * 2**20, max_file_bytes=2**20, watch=False)
    write(ws, "data.bin", os.urandom(900 * 1024))
    store.create(None, label="person")
    store.create(["data.bin"], label="a file tool on data.bin")
    for i in range(10):
        write(ws, "junk.bin", os.urandom(700 * 1024))
        store.create(None, label=f"agent {i}")
    store.wait_for_upkeep()
    assert store.list()[0].label == "person"


def test_a_prune_works_the_shares_out_once_per_batch_of_drops(
        ws: Path, make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every working-out reads every replaced version: once per drop made a prune of many
    small checkpoints take minutes, under the store's lock."""
    roomy = make_store(ws, max_store_bytes=2**30, max_file_bytes=2**20, watch=False)
    roomy.create(None, label="person")
    for n in range(64):
        for f in range(4):
            write(ws, f"s/{f}.bin", os.urandom(16 * 1024))
        roomy.create(None, label=f"agent {n}")
    roomy.close()
    workings: list[int] = []
    real = upkeep.kept_alive
    monkeypatch.setattr(upkeep, "kept_alive", lambda seqs, versions: (
        workings.append(len(seqs)), real(seqs, versions))[1])
    store = make_store(ws, max_store_bytes=2**20, max_file_bytes=2**20, watch=False)
    write(ws, "s/0.bin", os.urandom(16 * 1024))
    store.create(None, label="over the cap")
    store.wait_for_upkeep()
    dropped = 66 - len(store.list())
    assert dropped > 2 * upkeep.DROP_BATCH
    assert len(workings) <= dropped // upkeep.DROP_BATCH + 2


def test_the_newest_checkpoint_and_one_not_there_are_never_dropped(
        ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    first = store.create(None, label="baseline")
    write(ws, "README.md", "changed\n")
    newest = store.create(None, label="next")
    manifest = store._manifest
    with pytest.raises(CheckpointError, match="never pruned"):
        manifest.drop(int(newest.id[3:]))
    with pytest.raises(UnknownCheckpoint):
        manifest.drop(int(newest.id[3:]) + 1)
    assert [c.id for c in store.list()] == [first.id, newest.id]


def test_truncated_manifest_is_a_clear_error(ws: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with CheckpointStore(ws, state, watch=False) as store:
        store.create(None, label="baseline")
    manifest = state / "manifest.sqlite3"
    with open(manifest, "r+b") as handle:
        handle.truncate(manifest.stat().st_size // 3)
    with pytest.raises(CorruptStore, match="manifest"):
        with CheckpointStore(ws, state, watch=False) as store:
            store.list()


def test_garbage_manifest_is_a_clear_error(ws: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "manifest.sqlite3").write_bytes(b"not a database at all" * 100)
    with pytest.raises(CorruptStore, match="unreadable"):
        CheckpointStore(ws, state, watch=False)


def test_missing_objects_are_a_clear_error(ws: Path, make_store: StoreFactory) -> None:
    first = make_store(ws)
    first.create(["src/app.py"], label="edit")
    first.close()  # which moves the inbox into git
    store = make_store(ws)
    (cp,) = store.list()
    write(ws, "src/app.py", "changed\n")
    shutil.rmtree(store.state_dir / "git" / "objects")
    (store.state_dir / "git" / "objects" / "pack").mkdir(parents=True)
    store._blobs._objects = DiskObjectStore(str(store.state_dir / "git" / "objects"))
    with pytest.raises(CorruptStore, match="missing"):
        store.diff(cp.id)
    with pytest.raises(CorruptStore, match="missing"):
        store.restore(cp.id)
    assert (ws / "src/app.py").read_text() == "changed\n"


def test_a_full_disk_records_nothing(ws: Path, store: CheckpointStore,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = store.create(None, label="baseline")
    write(ws, "src/app.py", "changed\n")

    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(BlobStore, "_write_loose", no_space)
    write(ws, "src/big.bin", b"x" * (MAX_BLOB_BYTES + 1))  # too big for the inbox: a loose object
    with pytest.raises(DiskFull, match="nothing was recorded"):
        store.create(None, label="doomed")
    assert [c.id for c in store.list()] == [first.id]
    monkeypatch.undo()
    later = store.create(None, label="later")  # the changes were not lost
    assert later.files == ("src/app.py", "src/big.bin")


def test_a_full_disk_under_the_inbox_records_nothing(ws: Path, store: CheckpointStore) -> None:
    first = store.create(["src/app.py"], label="first")
    text = os.urandom(50_000).hex()  # 100 kB that no compression shrinks: new database pages
    write(ws, "src/app.py", text)
    manifest = store._manifest._db
    pages = manifest.execute("PRAGMA page_count").fetchone()[0]
    manifest.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "disk is full"
    with pytest.raises(DiskFull):
        store.create(["src/app.py"], label="doomed")
    assert [c.id for c in store.list()] == [first.id]
    manifest.execute("PRAGMA max_page_count = 1073741823")
    later = store.create(["src/app.py"], label="later")
    write(ws, "src/app.py", "after\n")
    store.restore(later.id)
    assert (ws / "src/app.py").read_text() == text


def test_deleted_workspace_is_a_clear_error(ws: Path, tmp_path: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    cp = store.create(None, label="baseline")
    shutil.rmtree(ws)
    for action in (lambda: store.create(None, label="x"), lambda: store.restore(cp.id),
                   lambda: store.diff(cp.id)):
        with pytest.raises(WorkspaceMissing, match="moved or deleted"):
            action()
    with pytest.raises(WorkspaceMissing):
        CheckpointStore(ws, tmp_path / "state", watch=False)


def test_replaced_workspace_is_a_clear_error(ws: Path, tmp_path: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    store.create(None, label="baseline")
    ws.rename(tmp_path / "moved")
    ws.mkdir()
    with pytest.raises(WorkspaceMissing, match="replaced"):
        store.create(None, label="x")


def test_a_store_belongs_to_one_workspace(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    CheckpointStore(ws, tmp_path / "state", watch=False).close()
    with pytest.raises(CorruptStore, match="belongs to"):
        CheckpointStore(other, tmp_path / "state", watch=False)


def test_two_stores_on_one_state_folder_stay_consistent(ws: Path, tmp_path: Path,
                                                         make_store: StoreFactory) -> None:
    daemon = make_store(ws)
    cli = make_store(ws, watch=False)
    daemon.create(None, label="baseline")
    write(ws, "src/app.py", "v2\n")
    cp = cli.create(None, label="from the cli")
    assert cp.files == ("src/app.py",)
    write(ws, "README.md", "v2\n")
    assert daemon.create(None, label="daemon again").files == ("README.md",)
    assert [c.id for c in daemon.list()] == [c.id for c in cli.list()]


def test_restoring_the_oldest_checkpoint_while_over_the_cap(ws: Path, make_store: StoreFactory) -> None:
    size = 1536 * 1024
    store = make_store(ws, max_store_bytes=4 * 2**20, max_file_bytes=2 * 2**20, watch=False)
    write(ws, "data.bin", os.urandom(size))
    first = store.create(["data.bin"], label="v0")
    original = (ws / "data.bin").read_bytes()
    write(ws, "data.bin", os.urandom(size))
    store.create(["data.bin"], label="v1")
    write(ws, "data.bin", os.urandom(size))  # the safety checkpoint takes the store over its cap
    store.restore(first.id)
    assert (ws / "data.bin").read_bytes() == original
    assert store.list()[0].label != "v0"  # pruned, but only once the restore was done


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which files and folders are made readable by others."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def open_to_others(top: Path) -> list[str]:
    """Everything under top (top included) that group or others may read, write or enter."""
    found = []
    for folder, _dirs, files in os.walk(top):
        for path in [folder, *(os.path.join(folder, name) for name in files)]:
            if stat.S_IMODE(os.lstat(path).st_mode) & 0o077:
                found.append(path)
    return found


def test_the_store_is_private_to_its_owner(ws: Path, umask_022: None) -> None:
    for i in range(70):  # enough new files for a pack, besides the loose objects below
        write(ws, f"gen/{i}.txt", f"file {i}\n")
    with CheckpointStore(ws) as store:
        store.create(None, label="baseline")
        write(ws, "README.md", "edited\n" * MAX_BLOB_BYTES)  # past the inbox: a loose object
        store.create(["README.md"], label="edit")
        home = state_home()
        assert open_to_others(home) == []
        for level in (home, home / "workspaces", store.state_dir.parent, store.state_dir):
            assert stat.S_IMODE(level.stat().st_mode) == 0o700
        objects = store.state_dir / "git" / "objects"
        blobs = [p for p in objects.rglob("*") if p.is_file() and p.parent.name != "info"]
        assert any(p.suffix == ".pack" for p in blobs) and any(len(p.parent.name) == 2 for p in blobs)
        assert {stat.S_IMODE(p.stat().st_mode) for p in blobs} == {0o400}
        manifest = store.state_dir / "manifest.sqlite3"
        assert stat.S_IMODE(manifest.stat().st_mode) == 0o600


def test_a_store_made_open_is_made_private_when_opened(ws: Path, tmp_path: Path,
                                                       umask_022: None) -> None:
    state = tmp_path / "old-store"
    with CheckpointStore(ws, state, watch=False) as store:
        store.create(None, label="baseline")
    for folder, _dirs, files in os.walk(state):  # as stores were made before
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    with CheckpointStore(ws, state, watch=False) as store:
        assert [c.label for c in store.list()] == ["baseline"]
    assert open_to_others(state) == []


def test_big_blobs_are_packed_whole_and_small_versions_as_deltas(tmp_path: Path) -> None:
    """A delta search over random data near the 5 MiB cap took minutes, and every checkpoint
    of the workspace waited for it. Blobs over DELTA_MAX_BYTES are packed whole; versions of a
    source file still become deltas of each other (what keeps storage small)."""
    store = BlobStore(tmp_path / "git")
    source = "".join(f"line {i}: some code here\n" for i in range(400))
    versions = [make_blob(source.replace("line 7:", f"line 7 (v{v}):").encode()) for v in range(3)]
    big = [make_blob(os.urandom(DELTA_MAX_BYTES + 4096)) for _ in range(2)]
    big.append(make_blob(big[0].data[:-1] + b"x"))  # a near copy: a delta, were it searched
    store.put(versions + big)
    store.repack([(blob_sha(b), "src/app.py") for b in versions]
                 + [(blob_sha(b), "data/blob.bin") for b in big], drop_loose=[
                     blob_sha(b) for b in versions + big])
    index = next((tmp_path / "git" / "objects" / "pack").glob("*.idx"))
    listing = subprocess.run(["git", "verify-pack", "-v", str(index)], capture_output=True,
                             text=True, check=True).stdout
    deltas = {line.split()[0] for line in listing.splitlines() if len(line.split()) >= 7}
    assert not deltas & {blob_sha(b) for b in big}, "big blobs are stored whole"
    assert len(deltas & {blob_sha(b) for b in versions}) == 2, "two versions are deltas of a third"
    assert [store.get(blob_sha(b)) for b in big] == [b.data for b in big]


def test_a_store_whose_first_opening_was_cut_short_opens_and_saves(
        ws: Path, make_store: StoreFactory, tmp_path: Path) -> None:
    """The daemon stopped while it made a workspace's store (its repository half made): the
    next opening makes it again, and checkpoints work, where every one was refused before."""
    state = tmp_path / "state"
    (state / "git" / "branches").mkdir(parents=True)  # where a cut-short init stopped
    (state / "git" / "refs").mkdir()
    store = make_store(ws, state_dir=state)
    before = store.create(None, label="first")
    write(ws, "src/app.py", "print('changed')\n")
    store.create(["src/app.py"], label="before an edit")
    store.restore(before.id)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"


def test_a_half_made_repository_that_holds_objects_is_left_alone(
        ws: Path, make_store: StoreFactory, tmp_path: Path) -> None:
    loose = tmp_path / "state" / "git" / "objects" / "ab"
    loose.mkdir(parents=True)
    (loose / "cdef").write_bytes(b"someone's object")
    with pytest.raises(CorruptStore, match="move it aside"):
        make_store(ws, state_dir=tmp_path / "state")
    assert (loose / "cdef").read_bytes() == b"someone's object"


@pytest.mark.parametrize("what", ["symlink", "file"])
def test_something_else_where_the_repository_goes_is_named_not_removed(
        ws: Path, make_store: StoreFactory, tmp_path: Path, what: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("kept\n")
    git = tmp_path / "state" / "git"
    git.parent.mkdir(parents=True)
    if what == "symlink":
        git.symlink_to(elsewhere)
    else:
        git.write_text("not a folder\n")
    with pytest.raises(CorruptStore, match="not a folder"):
        make_store(ws, state_dir=tmp_path / "state")
    assert (elsewhere / "keep.txt").read_text() == "kept\n"
    assert git.is_symlink() if what == "symlink" else git.read_text() == "not a folder\n"
