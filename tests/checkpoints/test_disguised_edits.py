"""An edit disguised for the stat cache (same size, mtime set back) is still recorded by a scan.

Without a watcher's report, a scan trusts a file whose size, mode and mtime match its record,
as git does; but an agent sets mtime with one `touch -d`. The inode's change time (ctime) it
cannot set: a file whose ctime is not older than the last checkpoint that covered the whole
workspace is read whatever its stat says. Each scan runs with every way the store lists a
tree: the native lister, GNU find, and the Python walk.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore, listing

from .conftest import StoreFactory, write
from .test_watch_limits import in_namespace, with_store

HOUR_AGO = time.time_ns() - 3600 * 10**9


def disguised_edit(ws: Path, rel: str, text: str) -> None:
    """Write text (the same size as before) and set the file's times back (`touch -r`)."""
    before = (ws / rel).stat()
    assert len(text) == before.st_size
    write(ws, rel, text)
    os.utime(ws / rel, ns=(before.st_atime_ns, before.st_mtime_ns))


def recorded_and_undone(ws: Path, store: CheckpointStore, baseline: str) -> None:
    """The next command checkpoint records the disguised edit of src/app.py, and restoring the
    baseline brings the person's text back."""
    after = store.create(None, label="after the agent")
    assert "src/app.py" in after.files
    assert [d.path for d in store.diff(baseline, against="current")] == ["src/app.py"]
    store.restore(baseline)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"


def copy_with_a_disguised_edit(ws: Path) -> None:
    """src/ copied into the ignored build/, its app.py edited in disguise there."""
    shutil.copytree(ws / "src", ws / "build/src", copy_function=shutil.copy2)
    disguised_edit(ws, "build/src/app.py", "print('HI')\n")


def swap_the_copy_in(ws: Path) -> None:
    os.rename(ws / "src", ws / "build/old")
    os.rename(ws / "build/src", ws / "src")


@pytest.fixture(params=["native", "find", "python"])
def lister(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param != "native":
        monkeypatch.setattr(listing, "native", None)
    if request.param == "python":
        monkeypatch.setattr(listing, "gnu_find", lambda: None)
    elif listing.lister() != request.param:
        pytest.skip(f"no {request.param} lister here")
    return str(request.param)


def test_a_scan_without_a_watcher_records_a_disguised_edit(
        ws: Path, make_store: StoreFactory, lister: str) -> None:
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    store.create(None, label="an idle command")  # a remembering walk settles every record
    disguised_edit(ws, "src/app.py", "print('HI')\n")
    recorded_and_undone(ws, store, baseline.id)


def test_a_file_tool_checkpoint_between_does_not_hide_an_earlier_disguised_edit(
        ws: Path, make_store: StoreFactory, lister: str) -> None:
    """A checkpoint of one named file covers nothing else: the scan after it still looks at
    what changed since the last checkpoint that covered the whole workspace."""
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    disguised_edit(ws, "src/app.py", "print('HI')\n")
    time.sleep(0.01)
    store.create(["README.md"], label="before write_to_file")
    after = store.create(None, label="before a command")
    assert "src/app.py" in after.files
    store.restore(baseline.id)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"


def test_an_untouched_file_is_not_read_again_scan_after_scan(
        ws: Path, make_store: StoreFactory, lister: str) -> None:
    """The ctime check costs a read only of what changed since the last whole checkpoint."""
    store = make_store(ws, watch=False)
    store.create(None, label="baseline")
    time.sleep(1.1)  # past the second a file system may round timestamps to
    store.create(None, label="a command")
    assert store.create(None, label="another").files == ()


SCENARIO = with_store("""
    unwatched = store.coverage().unwatched
    folders = sorted(p.name for p in ws.iterdir())
    edited = [f"{min(set(folders) - set(unwatched))}/f.txt", f"{min(unwatched)}/f.txt"]
    out["edited"] = edited
    baseline = store.create(None, label="before the agent")
    for rel in edited:
        before = (ws / rel).stat()
        (ws / rel).write_text("ORIGINAL\\n")  # the same size
        os.utime(ws / rel, ns=(before.st_atime_ns, before.st_mtime_ns))
    out["recorded"] = list(store.create(None, label="after the agent").files)
    store.restore(baseline.id)
    out["after_restore"] = [(ws / rel).read_text() for rel in edited]
""")


def test_a_disguised_edit_in_a_folder_past_the_watch_limit_is_recorded(tmp_path: Path) -> None:
    """Folders the watcher could not watch are scanned at every checkpoint; that scan checks
    ctime too. (The watched folder's edit is one the watcher reports.)"""
    ws = tmp_path / "ws"
    hour_ago = time.time_ns() - 3600 * 10**9
    for name in "abcdefghijklmnopqrstuvwxyz":
        write(ws, f"{name}/f.txt", "original\n")
        os.utime(ws / name / "f.txt", ns=(hour_ago, hour_ago))
    out = in_namespace(str(ws), str(tmp_path / "state"), script=SCENARIO)
    edited = out["edited"]  # one in a watched folder, one in a folder past the limit
    assert isinstance(edited, list) and sorted(out["recorded"]) == sorted(edited)  # type: ignore[arg-type]
    assert out["after_restore"] == ["original\n", "original\n"]


def test_a_file_hidden_by_an_ignore_rule_while_it_was_edited_is_read_once_shown_again(
        ws: Path, make_store: StoreFactory, lister: str) -> None:
    """An agent ignores src/app.py, edits it in disguise, waits out a whole checkpoint (which
    moves the ctime window past the edit) and takes the rule back: a file found ignored loses
    its stat cache, so the scan after reads it."""
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    write(ws, ".gitignore", "*.log\nbuild/\nsrc/app.py\n")
    store.create(None, label="before the agent's second command")
    disguised_edit(ws, "src/app.py", "print('HI')\n")
    time.sleep(1.2)  # past the window's second
    store.create(None, label="before the agent's third command")
    write(ws, ".gitignore", "*.log\nbuild/\n")
    after = store.create(None, label="after")
    assert "src/app.py" in after.files
    store.restore(baseline.id)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"


def test_a_disguised_edit_between_the_warm_ups_read_and_its_baseline_is_recorded(
        ws: Path, make_store: StoreFactory) -> None:
    """The warm-up reads every file first, then takes the baseline trusting what it read where
    the stat still matches: an edit made in between, its size and times kept, is read again
    (its ctime is later than the read began)."""
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)

    def progress(done: int, total: int) -> None:
        if done == total:  # every file read, the baseline not yet taken
            disguised_edit(ws, "src/app.py", "print('HI')\n")

    baseline = store.warm_up(progress)
    assert baseline is not None
    assert [d.path for d in store.diff(baseline.id, against="current")] == []
    write(ws, "src/app.py", "print('no')\n")
    store.create(None, label="before a command")
    store.restore(baseline.id)
    assert (ws / "src/app.py").read_text() == "print('HI')\n"  # what the baseline saw


def test_a_folder_swapped_in_whole_is_read_though_its_files_look_unchanged(
        ws: Path, make_store: StoreFactory, lister: str) -> None:
    """An agent copies src/ into an ignored folder, edits a copy in disguise, waits out a whole
    checkpoint (which moves the ctime window past the copy) and renames the copy over src/: a
    rename changes the folder's ctime, not its files'. The copies are other inodes, which the
    stat cache keeps, so the scan reads them."""
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    copy_with_a_disguised_edit(ws)
    time.sleep(1.2)  # past the window's second
    store.create(None, label="an idle command")
    swap_the_copy_in(ws)
    recorded_and_undone(ws, store, baseline.id)


def test_a_store_made_before_inode_numbers_reads_its_files_once_then_trusts_them(
        ws: Path, make_store: StoreFactory) -> None:
    """Entries recorded before the stat cache kept inode numbers vouch for nothing: the first
    scan after the upgrade reads their files (a folder swapped in meanwhile included), then
    keeps their inode numbers."""
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    copy_with_a_disguised_edit(ws)
    time.sleep(1.2)  # past the window's second
    store.create(None, label="an idle command")
    store.close()
    manifest = store.state_dir / "manifest.sqlite3"
    with sqlite3.connect(manifest) as db:
        db.execute("ALTER TABLE entries DROP COLUMN ino")  # as an older intentd left it
    swap_the_copy_in(ws)
    store = make_store(ws, watch=False)
    assert "src/app.py" in store.create(None, label="after the upgrade").files
    store.restore(baseline.id)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"
    with sqlite3.connect(manifest) as db:
        unknown = db.execute("SELECT COUNT(*) FROM entries e WHERE ino = 0 AND kind = 'file' AND"
                             " seq = (SELECT MAX(seq) FROM entries f WHERE f.path = e.path)")
        assert unknown.fetchone() == (0,), "every file's latest entry holds its inode number"
