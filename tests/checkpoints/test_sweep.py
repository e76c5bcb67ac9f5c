"""A write through a hard link is seen: no watcher reports it in the folder of the other name,
but the inode's change time gives it away, and a store's sweep makes the next look read it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import listing, sweep
from intentd.daemon.checkpoints.ignore import CheckpointIgnore
from intentd.daemon.checkpoints.sweep import changed_since
from tests.checkpoints.conftest import StoreFactory, overflowed, write


def write_through_a_link(target: Path, outside: Path, text: str) -> None:
    """What an agent's command can do unseen: link the file from outside the watched tree,
    write it there, set its mtime back and remove the link. The workspace hears nothing."""
    before = os.stat(target)
    link = outside / "link"
    os.link(target, link)
    link.write_text(text)
    os.utime(link, ns=(before.st_atime_ns, before.st_mtime_ns))
    link.unlink()


@pytest.fixture(params=["native", "find", "python"])
def lister(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each sweep runs with the native lister, with GNU find, and with neither (Python's walk)."""
    if request.param != "native":
        monkeypatch.setattr(listing, "native", None)
    if request.param == "python":
        monkeypatch.setattr(sweep, "list_records", lambda *args: None)
    elif request.param == "find" and listing.gnu_find() is None:
        pytest.skip("needs GNU find")
    return str(request.param)


def test_the_files_changed_since_are_listed_whatever_their_mtime_says(
        ws: Path, tmp_path: Path, lister: str) -> None:
    write(ws, ".git/config", "[core]\n")
    write(ws, "vendor/.git/HEAD", "ref: refs/heads/main\n")
    since = time.time_ns() - 1  # the coarse clock file times come from lags a little
    time.sleep(0.02)
    write_through_a_link(ws / "src" / "util.py", tmp_path, "def f():\n    return 2\n")
    write(ws, "debug.log", "ignored: a checkpoint never sees it\n")
    write(ws, ".git/config", "[core]\n\tfsmonitor = evil\n")  # git's own: git_control's job
    write(ws, "vendor/.git/HEAD", "nested git folders are left out too\n")
    rules = CheckpointIgnore(str(ws))
    assert changed_since(str(ws), rules, since) == ["src/util.py"]
    assert changed_since(str(ws), rules, time.time_ns() + 10**9) == []


def test_folders_ignored_by_name_are_not_listed_unless_a_deeper_rule_keeps_them(
        tmp_path: Path, lister: str) -> None:
    """A monorepo's node_modules/ in every package would cost the sweep a stat per file: left out
    by name. One a deeper .gitignore keeps (`!node_modules/`) is listed all the same."""
    ws = tmp_path / "ws"
    write(ws, ".gitignore", "node_modules/\n")
    write(ws, "packages/b/.gitignore", "!node_modules/\n")
    for package in ("a", "b"):
        write(ws, f"packages/{package}/node_modules/m/index.js", "old\n")
        write(ws, f"packages/{package}/src/app.js", "old\n")
    since = time.time_ns() - 1
    time.sleep(0.02)
    for package in ("a", "b"):
        write(ws, f"packages/{package}/node_modules/m/index.js", "new\n")
        write(ws, f"packages/{package}/src/app.js", "new\n")
    assert changed_since(str(ws), CheckpointIgnore(str(ws)), since) == [
        "packages/a/src/app.js", "packages/b/node_modules/m/index.js", "packages/b/src/app.js"]


@pytest.mark.timeout(20)
def test_a_fifo_is_not_a_folder_left_out_by_name(tmp_path: Path, lister: str) -> None:
    """find's %y calls a FIFO "p", which was also the mark of a folder left out by name: one
    `mkfifo` in the workspace made the sweep list it again, and again, and hang the audit."""
    ws = tmp_path / "ws"
    write(ws, ".gitignore", "node_modules/\n")
    write(ws, "src/app.js", "old\n")
    since = time.time_ns() - 1
    time.sleep(0.02)
    os.mkfifo(ws / "src" / "pipe")
    write(ws, "src/app.js", "new\n")
    assert changed_since(str(ws), CheckpointIgnore(str(ws)), since) == ["src/app.js"]


@pytest.mark.parametrize("watch", [True, False])
def test_after_a_sweep_the_store_sees_a_write_through_a_link(
        ws: Path, tmp_path: Path, make_store: StoreFactory, watch: bool) -> None:
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(ws / "README.md", ns=(hour_ago, hour_ago))  # old enough for its stat to vouch
    store = make_store(ws, watch=watch)
    checkpoint = store.create(None, label="before the command")
    time.sleep(0.02)
    write_through_a_link(ws / "README.md", tmp_path, "# DEMO\n")  # same size, same mtime
    # no event names it; without a watcher, the diff's scan sees its ctime
    assert [d.path for d in store.diff(checkpoint.id)] == ([] if watch else ["README.md"])
    assert "README.md" in store.sweep(checkpoint.id)  # with what changed just before it
    diffs = store.diff(checkpoint.id)
    assert [(d.path, d.status) for d in diffs] == [("README.md", "modified")]
    store.restore(checkpoint.id, path="README.md")
    assert (ws / "README.md").read_text() == "# demo\n"


@pytest.mark.parametrize("watch", [True, False])
def test_the_repositories_made_since_a_checkpoint_are_named(
        ws: Path, make_store: StoreFactory, watch: bool) -> None:
    """With the watcher, exactly those made; without one, a walk cannot tell a repository made
    from one git wrote in, so both are named as unsure."""
    write(ws, "vendor/lib/.git/config", "[core]\n")
    store = make_store(ws, watch=watch)
    checkpoint = store.create(None, label="before the command")
    mark = store.git_mark()
    time.sleep(0.02)
    write(ws, "docs/.git/config", "[core]\n\tfsmonitor = evil\n")
    write(ws, "src/new/.git", "gitdir: /elsewhere\n")
    os.rename(ws / "vendor/lib/.git/config", ws / "vendor/lib/.git/config.old")  # git writes in
    if watch:
        assert store.git_made(checkpoint.id, mark) == (("docs/.git", "src/new/.git"), ())
    else:
        assert mark is None
        assert store.git_made(checkpoint.id, mark) == (
            (), ("docs/.git", "src/new/.git", "vendor/lib/.git"))


def test_a_flood_of_events_hides_no_repository_made(ws: Path, tmp_path: Path,
                                                    make_store: StoreFactory) -> None:
    """An agent can overflow the watcher's queue to lose the event of the `.git` it makes.
    The walk then finds it, and tells it from an older one the watcher saw before, whatever
    its ctime says (one made earlier elsewhere and moved in with its folder keeps an old one)."""
    write(ws, "vendor/lib/.git/config", "[core]\n")
    write(tmp_path, "prepared/.git/config", "[core]\n\tfsmonitor = evil\n")
    store = make_store(ws)
    checkpoint = store.create(None, label="before the command")
    mark = store.git_mark()
    time.sleep(0.02)
    with overflowed(ws, store):
        write(ws, "docs/.git/config", "[core]\n\tfsmonitor = evil\n")  # its events are lost
        os.rename(tmp_path / "prepared", ws / "src" / "prepared")
        os.rename(ws / "vendor/lib/.git/config", ws / "vendor/lib/.git/config.old")
    assert store.git_made(checkpoint.id, mark) == (("docs/.git", "src/prepared/.git"), ())
    assert store.coverage().overflows == 1


def test_a_read_that_reuses_the_checkpoint_spares_no_repository_made(
        ws: Path, make_store: StoreFactory) -> None:
    """A read beside a command may reuse the command's checkpoint: what the command made
    still counts as made since its own mark."""
    store = make_store(ws)
    checkpoint = store.create(None, label="before the command")
    mark = store.git_mark()
    time.sleep(0.02)
    write(ws, "docs/.git/config", "[core]\n\tfsmonitor = evil\n")
    read, created = store.latest_or_create(label="before a read alongside")
    assert (read.id, created) == (checkpoint.id, False)
    assert store.git_made(read.id, store.git_mark()) == ((), ())  # the read's own: none
    assert store.git_made(checkpoint.id, mark) == (("docs/.git",), ())


def test_a_tree_thousands_of_folders_deep_is_walked(tmp_path: Path) -> None:
    """Deeper than Python's recursion limit: a walk that recursed would fail the audit."""
    (tmp_path / "ws").mkdir()
    fd = os.open(tmp_path / "ws", os.O_RDONLY)
    for _ in range(1100):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.mkdir(".git", dir_fd=fd)
    os.close(fd)
    try:
        found = sweep.git_entries(str(tmp_path / "ws"), ("",), ())
        assert found == {"/".join(["d"] * 1100) + "/.git"}
    finally:  # Python's own rmtree recurses too: pytest could not clean this up
        subprocess.run(["rm", "-rf", str(tmp_path / "ws")], check=True)


def test_a_repository_moved_with_its_folder_is_not_made_but_a_new_one_on_its_inode_is(
        ws: Path, make_store: StoreFactory) -> None:
    """Renaming a folder that holds the person's repository makes none; removing one and making
    another (whose inode may get the same number) does."""
    write(ws, "src/vendor/lib/.git/config", "[core]\n")
    write(ws, "docs/old/.git/config", "[core]\n")
    store = make_store(ws)
    store.create(None, label="baseline")
    checkpoint = store.create(None, label="before the command")
    mark = store.git_mark()
    time.sleep(0.02)
    os.rename(ws / "src/vendor", ws / "src/third_party")
    shutil.rmtree(ws / "docs/old/.git")
    write(ws, "docs/new/.git/config", "[core]\n\tfsmonitor = evil\n")
    assert store.git_made(checkpoint.id, mark) == (("docs/new/.git",), ())


UNLISTED = """
import os, sys, time
from pathlib import Path
from intentd.daemon.checkpoints import CheckpointStore
ws, state, outside = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
hour_ago = time.time_ns() - 3600 * 10**9
os.utime(ws / "docs" / "guide.md", ns=(hour_ago, hour_ago))
store = CheckpointStore(ws, state)
checkpoint = store.create(None, label="before the command")
time.sleep(0.02)
os.link(ws / "docs" / "guide.md", outside / "link")
(outside / "link").write_text("# GUIDE\\n")
os.utime(outside / "link", ns=(hour_ago, hour_ago))
(outside / "link").unlink()
os.chmod(ws / "docs", 0o311)  # the right to list it taken away; its files still open by name
print(",".join(store.sweep(checkpoint.id)))
os.chmod(ws / "docs", 0o755)
store.close()
"""


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
@pytest.mark.parametrize("lister", ["native", "find"])
def test_a_folder_that_cannot_be_listed_hides_no_write(tmp_path: Path, lister: str) -> None:
    """A write through a link, then the folder made unlistable: its known files are asked for
    by name. Run without the root's right to read any folder, as an agent's user runs."""
    ws = tmp_path / "ws"
    write(ws, "docs/guide.md", "# guide\n")
    write(ws, "src/app.py", "print('hi')\n")
    script = UNLISTED if lister == "native" else (
        "from intentd.daemon.checkpoints import listing; listing.native = None\n" + UNLISTED)
    done = subprocess.run(["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                           sys.executable, "-c", script, str(ws), str(tmp_path / "state"),
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "docs/guide.md" in done.stdout.strip().split(",")
