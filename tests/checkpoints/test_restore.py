"""Restore: exact, undoable, never touching what it did not save, all or nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore, DiskFull, RestoreFailed

from .conftest import StoreFactory, tree, write


def digest_dir(root: Path) -> str:
    """A hash of every file name, mode and byte under root (a .git folder, say)."""
    h = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            st = os.lstat(path)
            h.update(f"{path.relative_to(root)}:{stat.S_IMODE(st.st_mode)}:{st.st_mtime_ns}".encode())
            h.update(path.read_bytes() if not path.is_symlink() else os.readlink(path).encode())
    return h.hexdigest()


def git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd))
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_safety_checkpoint_undoes_a_restore(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(None, label="baseline")
    write(ws, "src/app.py", "agent work\n")
    write(ws, "src/extra.py", "more agent work\n")
    after = tree(ws)
    result = store.restore(cp.id)
    assert not (ws / "src/extra.py").exists()
    undo = store.restore(result.safety_checkpoint_id)
    assert tree(ws) == after
    assert set(undo.restored) == {"src/app.py", "src/extra.py"}


def test_never_touches_files_it_never_saw(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, watch=False)
    cp = store.create(["src/app.py"], label="edit")  # the store knows nothing else yet
    write(ws, "src/app.py", "agent\n")
    write(ws, "user-notes.txt", "the person's own file\n")
    write(ws, "trace.log", "ignored file\n")
    result = store.restore(cp.id)
    assert result.restored == ("src/app.py",) and result.deleted == ()
    assert (ws / "user-notes.txt").exists() and (ws / "trace.log").exists()


def test_ignored_files_are_never_saved_nor_touched(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(None, label="baseline")
    write(ws, "debug.log", "new noise\n")
    write(ws, "build/new.bin", b"\0")
    store.restore(cp.id)
    assert (ws / "debug.log").read_text() == "new noise\n"
    assert (ws / "build/new.bin").exists()


def test_the_workspace_git_and_nested_repos_are_left_alone(ws: Path, store: CheckpointStore) -> None:
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "init")
    nested = ws / "vendor" / "lib"
    write(nested, "lib.py", "v1\n")
    git(nested, "init", "-q")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "nested")
    outer, inner = digest_dir(ws / ".git"), digest_dir(nested / ".git")
    cp = store.create(None, label="baseline")
    assert "vendor/lib/lib.py" in cp.files
    assert not any(".git/" in f or f.endswith(".git") for f in cp.files)
    write(nested, "lib.py", "v2\n")
    write(ws, "src/app.py", "changed\n")
    store.create(None, label="more")
    store.restore(cp.id)
    assert (nested / "lib.py").read_text() == "v1\n"
    assert digest_dir(ws / ".git") == outer and digest_dir(nested / ".git") == inner
    assert not str(store.state_dir).startswith(str(ws))


def fail_restore_rename(monkeypatch: pytest.MonkeyPatch, nth: int) -> None:
    """The restore's nth rename fails (an I/O error); the others, and its roll-back, work."""
    real_replace = os.replace
    calls = {"n": 0}

    def flaky(src: str, dst: str, **dir_fds: int) -> None:
        if dir_fds:  # the restore's renames (the store's own writes go through os.replace too)
            calls["n"] += 1
            if calls["n"] == nth:
                raise OSError(5, "Input/output error")
        real_replace(src, dst, **dir_fds)

    monkeypatch.setattr(os, "replace", flaky)


def test_restore_is_all_or_nothing_when_a_rename_fails(
        ws: Path, store: CheckpointStore, monkeypatch: pytest.MonkeyPatch) -> None:
    cp = store.create(None, label="baseline")
    write(ws, "README.md", "agent 1\n")
    write(ws, "src/app.py", "agent 2\n")
    write(ws, "src/util.py", "agent 3\n")
    write(ws, "src/new.py", "agent 4\n")
    before = tree(ws)
    fail_restore_rename(monkeypatch, 2)
    with pytest.raises(RestoreFailed, match="rolled back"):
        store.restore(cp.id)
    assert tree(ws) == before  # no temp files left either


def test_restore_changes_nothing_when_a_file_cannot_be_written(
        ws: Path, store: CheckpointStore) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    cp = store.create(None, label="baseline")
    write(ws, "README.md", "agent\n")
    write(ws, "src/app.py", "agent\n")
    before = tree(ws)
    os.chmod(ws / "src", 0o555)
    try:
        with pytest.raises(RestoreFailed, match="nothing was changed"):
            store.restore(cp.id)
    finally:
        os.chmod(ws / "src", 0o755)
    assert tree(ws) == before


def test_restore_changes_nothing_when_the_disk_fills_up(
        ws: Path, store: CheckpointStore, monkeypatch: pytest.MonkeyPatch) -> None:
    cp = store.create(None, label="baseline")
    write(ws, "README.md", "agent\n")
    write(ws, "src/app.py", "agent\n")
    write(ws, "src/util.py", "agent\n")
    before = tree(ws)
    real_fsync = os.fsync
    calls = {"n": 0}

    def full(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DiskFull, match="nothing was changed"):
        store.restore(cp.id)
    assert tree(ws) == before


def test_restore_changes_nothing_when_a_folder_is_in_the_way(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(["README.md"], label="edit")
    (ws / "README.md").unlink()
    write(ws, "README.md/inside.txt", "a folder now stands there\n")
    before = tree(ws)
    with pytest.raises(RestoreFailed, match="did not save"):
        store.restore(cp.id)
    assert tree(ws) == before


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_file_or_symlink_where_a_folder_was_gives_way(ws: Path, store: CheckpointStore,
                                                        tmp_path: Path, kind: str) -> None:
    """`rm -rf src; touch src` (or a symlink there, to a folder outside): once made every
    restore of the workspace fail. What stands there is new since the checkpoint, so the
    restore deletes it anyway: it is moved aside first, and never followed."""
    cp = store.create(None, label="baseline")
    write(ws, "README.md", "# wrecked\n")
    shutil.rmtree(ws / "src")
    write(tmp_path, "outside/keep.txt", "not the workspace's\n")
    if kind == "file":
        write(ws, "src", "a file now\n")
    else:
        os.symlink(tmp_path / "outside", ws / "src")
    result = store.restore(cp.id)
    assert "src" in result.deleted
    assert (ws / "src" / "app.py").read_text() == "print('hi')\n"
    assert (ws / "README.md").read_text() == "# demo\n"
    assert sorted(os.listdir(tmp_path / "outside")) == ["keep.txt"]
    assert not [name for name in os.listdir(ws) if "intentd-aside" in name]


def test_a_restore_that_fails_puts_what_it_moved_aside_back(
        ws: Path, store: CheckpointStore, monkeypatch: pytest.MonkeyPatch) -> None:
    cp = store.create(None, label="baseline")
    shutil.rmtree(ws / "src")
    write(ws, "src", "a file now\n")
    before = tree(ws)
    fail_restore_rename(monkeypatch, 1)  # into src/, after the file there was deleted
    with pytest.raises(RestoreFailed, match="rolled back"):
        store.restore(cp.id)
    assert tree(ws) == before, "the file is back where it stood, no folder or aside left"


def test_a_blocker_no_checkpoint_saved_stops_the_restore_and_says_what_to_do(
        ws: Path, make_store: StoreFactory) -> None:
    """Over the size cap, what stands where src/ was is not saved, so not deleted either: the
    restore fails whole, naming it, and changes nothing."""
    store = make_store(ws, max_file_bytes=1024)
    cp = store.create(None, label="baseline")
    write(ws, "README.md", "# wrecked\n")
    shutil.rmtree(ws / "src")
    write(ws, "src", "x" * 4096)
    before = tree(ws)
    with pytest.raises(RestoreFailed, match="src is not a folder any more .*move it away"):
        store.restore(cp.id)
    assert tree(ws) == before, "nothing was changed"


def test_a_folder_made_by_the_agent_gives_way_to_the_file(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(None, label="baseline")
    (ws / "README.md").unlink()
    write(ws, "README.md/inside.txt", "agent\n")
    store.restore(cp.id)
    assert (ws / "README.md").read_text() == "# demo\n"


def test_a_file_with_a_long_name_is_restored(ws: Path, store: CheckpointStore) -> None:
    """81 CJK characters are a legal 243-byte name; the temporary file a restore writes beside
    it once took the name's first 200 characters, over the 255-byte limit, and every restore
    of the workspace failed ("File name too long"): an agent could plant one to block them."""
    name = "src/" + "文" * 81 + ".md"
    write(ws, name, "the person's notes\n")
    cp = store.create(None, label="baseline")
    write(ws, name, "the agent's\n")
    write(ws, "README.md", "# wrecked\n")
    store.restore(cp.id)
    assert (ws / name).read_text() == "the person's notes\n"
    assert (ws / "README.md").read_text() == "# demo\n"


def test_unsaved_big_files_are_left_alone(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, max_file_bytes=1024)
    cp = store.create(None, label="baseline")
    write(ws, "README.md", "x" * 5000)  # over the cap now: its new content is not saved
    result = store.restore(cp.id)
    assert (ws / "README.md").read_text() == "x" * 5000
    assert "README.md" in dict(result.skipped)


NO_STATE = "no state at this checkpoint; left in place"


def test_paths_with_no_state_at_the_checkpoint_are_reported(ws: Path, make_store: StoreFactory) -> None:
    """A file first recorded after a gap (here: an incomplete checkpoint in between, as the first
    edit after a restart is) has no state at the checkpoint: restore and diff say so."""
    store = make_store(ws, watch=False)
    cp = store.create(None, label="baseline")
    store.create(["src/app.py"], label="first edit after a restart")
    time.sleep(0.05)  # file times lag the checkpoint's clock by a tick or two
    write(ws, "gap.txt", "made while nobody watched\n")
    store.create(None, label="command")
    (gap,) = store.diff(cp.id)
    assert gap.path == "gap.txt" and NO_STATE in gap.unified
    result = store.restore(cp.id)
    assert result.skipped == (("gap.txt", NO_STATE),)
    assert (ws / "gap.txt").read_text() == "made while nobody watched\n"


def test_files_unchanged_since_before_the_checkpoint_are_not_reported(
        ws: Path, make_store: StoreFactory) -> None:
    """The store first sees README.md after the checkpoint, but it has not changed since before
    it (ctime), so leaving it is exactly the checkpoint's state: nothing to report."""
    store = make_store(ws, watch=False)
    cp = store.create(["src/app.py"], label="edit")
    write(ws, "src/app.py", "agent\n")
    store.create(None, label="command")  # records the whole workspace for the first time
    assert [d.path for d in store.diff(cp.id)] == ["src/app.py"]
    result = store.restore(cp.id)
    assert result.restored == ("src/app.py",) and result.skipped == ()


@pytest.mark.parametrize("watch", [True, False])
def test_restore_rewinds_every_later_checkpoint_of_every_kind(
        ws: Path, make_store: StoreFactory, watch: bool) -> None:
    """Files made after the checkpoint, each first recorded (as absent) by a later one, a file
    tool's or a command's, are deleted; everything else comes back as it was."""
    store = make_store(ws, watch=watch)
    before = tree(ws)
    first = store.create(["src/app.py"], label="before write_file")
    write(ws, "src/app.py", "agent\n")
    store.create(["src/new.py"], label="before write_file src/new.py")
    write(ws, "src/new.py", "made by a file tool\n")
    store.create(None, label="before a command")
    write(ws, "made/by/command.txt", "made by a command\n")
    write(ws, "README.md", "edited by the command\n")
    store.create(["src/util.py"], label="before another edit")
    (ws / "src/util.py").unlink()
    store.create(None, label="before another command")
    result = store.restore(first.id)
    if not watch:
        # without a watcher a file checkpoint sees only its own paths, so nothing says the command's
        # file was absent before: it is left in place, and said so
        assert result.skipped == (("made/by/command.txt", NO_STATE),)
        (ws / "made/by/command.txt").unlink()
        (ws / "made/by").rmdir()
        (ws / "made").rmdir()
    assert tree(ws) == before
    assert set(result.deleted) == {"src/new.py", "made/by/command.txt"} - ({""} if watch else {
        "made/by/command.txt"})
    if watch:
        assert result.skipped == () and store.diff(first.id) == []


@pytest.mark.parametrize("after", ["_verify", "_prepare"])
def test_restore_never_follows_a_symlink_swapped_in_after_its_check(
        ws: Path, tmp_path: Path, store: CheckpointStore, monkeypatch: pytest.MonkeyPatch,
        after: str) -> None:
    """The agent swaps a folder for a symlink to somewhere else while a restore runs (after the
    check, or after the new contents are staged): nothing may land outside the workspace."""
    from intentd.daemon.checkpoints import restore as restore_module

    outside = tmp_path / "outside"
    write(outside, "new.py", "a file of the person's, elsewhere\n")
    cp = store.create(None, label="baseline")
    write(ws, "src/app.py", "agent\n")
    write(ws, "src/new.py", "made after the checkpoint: restore deletes it\n")
    (ws / "src/util.py").unlink()
    real = getattr(restore_module.Restorer, after)

    def then_swap(self: object, *args: object) -> object:
        result = real(self, *args)
        os.rename(ws / "src", ws / "src.moved")
        os.symlink(outside, ws / "src")
        return result

    monkeypatch.setattr(restore_module.Restorer, after, then_swap)
    try:
        store.restore(cp.id)
    except RestoreFailed as exc:
        assert "src" in str(exc)
    assert tree(outside) == {"new.py": b"a file of the person's, elsewhere\n"}


def test_set_aside_removes_only_the_named_files_it_saved(ws: Path, store: CheckpointStore) -> None:
    """For a file no restore can put back (no checkpoint knew it before): saved, then removed,
    and the checkpoint that saved it brings it back. Another change recorded by the same
    checkpoint stays, and so does a named file the checkpoint could not save."""
    store.create(None, label="baseline")
    write(ws, "docs/.gitignore", "secret/\n")
    write(ws, "src/app.py", "print('changed')\n")
    write(ws, "trace.log", "ignored, so never saved\n")
    aside = store.set_aside(["docs/.gitignore", "trace.log"], label="set aside")
    assert aside.deleted == ("docs/.gitignore",)
    assert [path for path, _why in aside.skipped] == ["trace.log"]
    assert not (ws / "docs" / ".gitignore").exists()
    assert (ws / "src" / "app.py").read_text() == "print('changed')\n"
    assert (ws / "trace.log").exists()
    store.restore(aside.safety_checkpoint_id, path="docs/.gitignore")
    assert (ws / "docs" / ".gitignore").read_text() == "secret/\n"
