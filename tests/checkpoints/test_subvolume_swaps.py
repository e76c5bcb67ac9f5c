"""A btrfs subvolume put in place whole is read, though its files look unchanged.

An agent snapshots src/ (a subvolume) into an ignored folder, edits the copy in disguise (same
size, mtime set back), waits out a whole checkpoint, and puts the copy over src/: by a rename,
or by removing src/ and snapshotting the copy in its place. A snapshot keeps its files' inode
numbers and change times, so the stat cache matches; only the folder it was put into changed.
These run on a real btrfs file system in a loop-mounted image, which needs root (skipped
elsewhere), with each way the store lists a tree, and past the inotify watch limit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import WorkspaceMissing, subvolumes
from intentd.daemon.checkpoints.recorder import Recorder

from .conftest import StoreFactory, write
from .test_disguised_edits import HOUR_AGO, disguised_edit, lister, recorded_and_undone
from .test_watch_limits import in_namespace, with_store

__all__ = ["lister"]  # the fixture, imported for the tests below


def btrfs_cli(*args: str) -> None:
    subprocess.run(["btrfs", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def btrfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A btrfs file system mounted for the module's tests."""
    if os.geteuid() != 0 or shutil.which("mkfs.btrfs") is None or shutil.which("btrfs") is None:
        pytest.skip("a btrfs image needs root, mkfs.btrfs and btrfs")
    base = tmp_path_factory.mktemp("btrfs")
    image, mount = base / "fs.img", base / "mnt"
    mount.mkdir()
    with open(image, "wb") as handle:
        handle.truncate(128 * 2**20)
    made = subprocess.run(["mkfs.btrfs", "-q", str(image)], capture_output=True)
    mounted = made.returncode == 0 and subprocess.run(
        ["mount", "-o", "loop", str(image), str(mount)], capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("this machine cannot loop-mount a btrfs image")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
        image.unlink()


def workspace_with_a_subvolume(btrfs: Path, name: str) -> Path:
    """A workspace whose src/ is a subvolume; build/ is ignored."""
    ws = btrfs / name
    write(ws, ".gitignore", "build/\n")
    (ws / "build").mkdir()
    btrfs_cli("subvolume", "create", str(ws / "src"))
    write(ws, "src/app.py", "print('hi')\n")
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    return ws


def snapshot_with_a_disguised_edit(ws: Path) -> None:
    btrfs_cli("subvolume", "snapshot", str(ws / "src"), str(ws / "build/src"))
    disguised_edit(ws, "build/src/app.py", "print('HI')\n")


@pytest.mark.parametrize("how", ["renamed", "snapshotted"])
def test_a_subvolume_put_over_a_folder_is_read_though_its_files_look_unchanged(
        btrfs: Path, make_store: StoreFactory, lister: str, how: str) -> None:
    ws = workspace_with_a_subvolume(btrfs, f"ws-{lister}-{how}")
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    snapshot_with_a_disguised_edit(ws)
    time.sleep(1.2)  # past the window's second
    store.create(None, label="an idle command")
    if how == "renamed":
        os.rename(ws / "src", ws / "build/old")
        os.rename(ws / "build/src", ws / "src")
    else:  # src/ removed; the snapshot of the copy may get the device number src/ had
        btrfs_cli("subvolume", "delete", str(ws / "src"))
        btrfs_cli("subvolume", "snapshot", str(ws / "build/src"), str(ws / "src"))
    recorded_and_undone(ws, store, baseline.id)


def test_a_folder_holding_a_subvolume_put_over_its_parent_is_read(
        btrfs: Path, make_store: StoreFactory, lister: str) -> None:
    """The swap one level up: a/b/src is the subvolume; a copy of a/ holding a snapshot of it,
    edited in disguise, is renamed over a/. Neither src/ nor b/ changed; a/ did."""
    ws = btrfs / f"deep-{lister}"
    write(ws, ".gitignore", "build/\n")
    (ws / "a/b").mkdir(parents=True)
    btrfs_cli("subvolume", "create", str(ws / "a/b/src"))
    write(ws, "a/b/src/app.py", "print('hi')\n")
    os.utime(ws / "a/b/src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    (ws / "build/a2/b").mkdir(parents=True)
    btrfs_cli("subvolume", "snapshot", str(ws / "a/b/src"), str(ws / "build/a2/b/src"))
    disguised_edit(ws, "build/a2/b/src/app.py", "print('HI')\n")
    time.sleep(1.2)
    store.create(None, label="an idle command")
    os.rename(ws / "a", ws / "build/old")
    os.rename(ws / "build/a2", ws / "a")
    assert "a/b/src/app.py" in store.create(None, label="after the agent").files
    store.restore(baseline.id)
    assert (ws / "a/b/src/app.py").read_text() == "print('hi')\n"


def test_a_store_opened_through_a_symlink_sees_the_subvolumes_too(
        btrfs: Path, make_store: StoreFactory, lister: str, tmp_path: Path) -> None:
    ws = workspace_with_a_subvolume(btrfs, f"linked-{lister}")
    link = tmp_path / "link"
    link.symlink_to(ws)
    store = make_store(link, watch=False)  # on another file system by its path as given
    baseline = store.create(None, label="before the agent")
    snapshot_with_a_disguised_edit(ws)
    time.sleep(1.2)
    store.create(None, label="an idle command")
    os.rename(ws / "src", ws / "build/old")
    os.rename(ws / "build/src", ws / "src")
    recorded_and_undone(ws, store, baseline.id)


def test_a_subvolume_left_alone_is_not_read_again(btrfs: Path, make_store: StoreFactory,
                                                  lister: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Files beneath a subvolume are read again only when the folder it is in changed."""
    ws = workspace_with_a_subvolume(btrfs, f"ws-{lister}-alone")
    store = make_store(ws, watch=False)
    store.create(None, label="baseline")
    time.sleep(1.2)
    store.create(None, label="a command")
    read: list[str] = []
    observe = Recorder._observe_file
    monkeypatch.setattr(Recorder, "_observe_file",
                        lambda self, rel, st: read.append(rel) or observe(self, rel, st))
    write(ws, "src/new.py", "x = 1\n")  # inside the subvolume: the folder it is in is not touched
    assert store.create(None, label="another").files == ("src/new.py",)
    assert [rel for rel in read if rel.startswith("src/")] == ["src/new.py"]
    read.clear()
    write(ws, "notes.txt", "x\n")  # beside it: now src/ may have been put in anew
    assert store.create(None, label="and another").files == ("notes.txt",)
    assert sorted(rel for rel in read if rel.startswith("src/")) == ["src/app.py", "src/new.py"]


def test_a_workspace_that_is_a_subvolume_put_back_whole_is_never_trusted(
        btrfs: Path, make_store: StoreFactory) -> None:
    """The workspace itself replaced by a snapshot of an edited copy: refused as another
    folder, or read whole when it got the device number it had; never trusted."""
    ws, copy = btrfs / "whole", btrfs / "whole-copy"
    btrfs_cli("subvolume", "create", str(ws))
    write(ws, "src/app.py", "print('hi')\n")
    os.utime(ws / "src/app.py", ns=(HOUR_AGO, HOUR_AGO))
    store = make_store(ws, watch=False)
    baseline = store.create(None, label="before the agent")
    btrfs_cli("subvolume", "snapshot", str(ws), str(copy))
    disguised_edit(copy, "src/app.py", "print('HI')\n")
    time.sleep(1.2)
    store.create(None, label="an idle command")
    btrfs_cli("subvolume", "delete", str(ws))
    btrfs_cli("subvolume", "snapshot", str(copy), str(ws))
    try:
        recorded_and_undone(ws, store, baseline.id)
    except WorkspaceMissing:
        pass  # another device number: the store sees another folder and takes nothing


def test_a_workspace_in_a_subvolume_put_back_whole_is_refused_as_another_folder(
        btrfs: Path, make_store: StoreFactory) -> None:
    """The workspace is a plain folder in a subvolume the agent replaces by a snapshot of an
    edited copy: the device number may come back, and the workspace's inode is the same; the
    subvolume's id is not (statx, Linux 6.10+)."""
    holder, copy = btrfs / "holder", btrfs / "holder-copy"
    btrfs_cli("subvolume", "create", str(holder))
    ws = holder / "ws"
    write(ws, "src/app.py", "print('hi')\n")
    if subvolumes.subvolume_id(str(ws)) is None:
        pytest.skip("this kernel does not give a file's subvolume (statx STATX_SUBVOL)")
    store = make_store(ws, watch=False)
    store.create(None, label="before the agent")
    btrfs_cli("subvolume", "snapshot", str(holder), str(copy))
    disguised_edit(copy / "ws", "src/app.py", "print('HI')\n")
    btrfs_cli("subvolume", "delete", str(holder))
    btrfs_cli("subvolume", "snapshot", str(copy), str(holder))
    with pytest.raises(WorkspaceMissing):
        store.create(None, label="after the agent")


UNWATCHED = with_store("""
    folder = min(p for p in store.coverage().unwatched if "/" not in p and p != "build")
    out["folder"] = folder
    baseline = store.create(None, label="before the agent")
    subprocess.run(["btrfs", "subvolume", "snapshot", str(ws / folder / "sub"),
                    str(ws / "build/sub")], check=True, capture_output=True)
    app = ws / "build/sub/app.py"
    before = app.stat()
    app.write_text("print('HI')\\n")
    os.utime(app, ns=(before.st_atime_ns, before.st_mtime_ns))
    time.sleep(1.2)
    store.create(None, label="an idle command")
    os.rename(ws / folder / "sub", ws / "build/old")
    os.rename(ws / "build/sub", ws / folder / "sub")
    out["recorded"] = list(store.create(None, label="after the agent").files)
    store.restore(baseline.id)
    out["after_restore"] = (ws / folder / "sub/app.py").read_text()
""")


def test_a_subvolume_put_in_a_folder_past_the_watch_limit_is_read(btrfs: Path,
                                                                   tmp_path: Path) -> None:
    ws = btrfs / "limited"
    write(ws, ".gitignore", "build/\n")
    (ws / "build").mkdir()
    for n in range(6):
        btrfs_cli("subvolume", "create", str(ws / f"d{n}"))  # a subvolume in a subvolume too
        btrfs_cli("subvolume", "create", str(ws / f"d{n}/sub"))
        write(ws, f"d{n}/sub/app.py", "print('hi')\n")
        os.utime(ws / f"d{n}/sub/app.py", ns=(HOUR_AGO, HOUR_AGO))
    out = in_namespace(str(ws), str(tmp_path / "state"), script=UNWATCHED)
    folder = out["folder"]
    assert out["recorded"] == [f"{folder}/sub/app.py"], json.dumps(out)
    assert out["after_restore"] == "print('hi')\n"
