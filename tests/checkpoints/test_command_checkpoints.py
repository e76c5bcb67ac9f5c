"""Checkpoints before a shell command: what changed since the last one, from the watcher or a scan."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore, capture, inotify_tracker, walk
from intentd.daemon.policy.ignore import IgnoreRules as PolicyIgnore

from .conftest import StoreFactory, overflowed, tree, write


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Folders fully scanned ('' = the whole workspace) during the test."""
    seen: list[str] = []
    real = capture.scan

    def counting(root: str, rules: object, folder: str = "", **options: bool) -> object:
        seen.append(folder)
        return real(root, rules, folder, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(capture, "scan", counting)
    real_walk = walk.RecordWalker.walk

    def counting_walk(self: walk.RecordWalker, known: object, recent_ns: int | None = None) -> object:
        seen.append("")  # the whole workspace, listed by find
        return real_walk(self, known, recent_ns)  # type: ignore[arg-type]

    monkeypatch.setattr(walk.RecordWalker, "walk", counting_walk)
    return seen


def test_first_command_checkpoint_saves_the_workspace_minus_ignored(
        ws: Path, store: CheckpointStore) -> None:
    cp = store.create(None, label="before make")
    assert cp.kind == "command"
    assert set(cp.files) == {".gitignore", "README.md", "src/app.py", "src/util.py"}


def test_watcher_records_only_what_changed_without_scanning(
        ws: Path, store: CheckpointStore, scans: list[str]) -> None:
    assert store.watching
    store.create(None, label="baseline")
    scans.clear()
    write(ws, "src/app.py", "print('edited')\n")
    write(ws, "src/pkg/new.py", "x = 1\n")
    (ws / "src/util.py").unlink()
    write(ws, "more.log", "ignored\n")
    cp = store.create(None, label="next")
    assert set(cp.files) == {"src/app.py", "src/pkg/new.py", "src/util.py"}
    assert "" not in scans  # no full scan: only the new folder was looked into


def test_full_scan_fallback_without_watcher_finds_changes(
        ws: Path, make_store: StoreFactory, scans: list[str]) -> None:
    store = make_store(ws, watch=False)
    assert not store.watching
    store.create(None, label="baseline")
    write(ws, "src/app.py", "print('edited')\n")
    write(ws, "added.txt", "new\n")
    cp = store.create(None, label="next")
    assert set(cp.files) == {"src/app.py", "added.txt"}
    assert scans.count("") == 2


def test_stopped_watcher_falls_back_to_a_scan(ws: Path, store: CheckpointStore,
                                               scans: list[str]) -> None:
    store.create(None, label="baseline")
    store._tracker.stop()  # type: ignore[union-attr]  # as if the observer thread died
    write(ws, "src/app.py", "changed while nobody watched\n")
    cp = store.create(None, label="next")
    assert cp.files == ("src/app.py",)
    assert "" in scans


def test_a_queue_overflow_forces_a_scan(ws: Path, store: CheckpointStore, scans: list[str]) -> None:
    store.create(None, label="baseline")
    scans.clear()
    with overflowed(ws, store):
        write(ws, "src/app.py", "changed after the overflow\n")
    cp = store.create(None, label="next")
    assert cp.files == ("src/app.py",)
    assert "" in scans and store.coverage().overflows == 1
    scans.clear()
    write(ws, "README.md", "again\n")
    assert store.create(None, label="after").files == ("README.md",)
    assert "" not in scans


def test_deep_folders_made_at_once_are_seen(ws: Path, store: CheckpointStore,
                                            scans: list[str]) -> None:
    """Folders made faster than a watch can be added: what they hold is found by scanning them."""
    store.create(None, label="baseline")
    scans.clear()
    os.makedirs(ws / "a/b/c/d/e")
    write(ws, "a/b/c/d/e/deep.txt", "deep\n")
    write(ws, "a/top.txt", "top\n")
    assert set(store.create(None, label="next").files) == {"a/b/c/d/e/deep.txt", "a/top.txt"}
    assert "" not in scans
    write(ws, "a/b/c/d/e/deep.txt", "edited\n")  # the new folders are watched by now
    scans.clear()
    assert store.create(None, label="again").files == ("a/b/c/d/e/deep.txt",) and scans == []


def test_moved_and_deleted_folders_are_tracked(ws: Path, store: CheckpointStore) -> None:
    store.create(None, label="baseline")
    shutil.move(str(ws / "src"), str(ws / "lib"))
    cp = store.create(None, label="after mv")
    assert set(cp.files) == {"src/app.py", "src/util.py", "lib/app.py", "lib/util.py"}
    before = tree(ws)
    shutil.rmtree(ws / "lib")
    store.create(None, label="before nothing")
    store.restore(cp.id)
    assert tree(ws) == before


def test_a_folder_swapped_for_a_symlink_is_not_walked(ws: Path, store: CheckpointStore,
                                                      tmp_path: Path) -> None:
    """The watcher reports src/ gone; a symlink to a folder outside (to /, say) now stands
    there. What is out there is not the workspace's: the store records the link, and lists
    nothing of the outside tree (whose names anyone who lists checkpoints could read)."""
    write(tmp_path, "outside/private/id_ed25519", "KEY\n")
    store.create(None, label="baseline")
    shutil.rmtree(ws / "src")
    os.symlink(tmp_path / "outside", ws / "src")
    cp = store.create(None, label="after the swap")
    assert set(cp.files) == {"src", "src/app.py", "src/util.py"}
    assert not any(path.startswith("src/private") for c in store.list()
                   for path in [*c.files, *(skipped for skipped, _ in c.skipped)])


def test_changes_inside_git_folders_are_not_recorded(ws: Path, store: CheckpointStore) -> None:
    write(ws, ".git/HEAD", "ref: refs/heads/main\n")
    store.create(None, label="baseline")
    write(ws, ".git/index", "binary index\n")
    write(ws, "README.md", "changed\n")
    assert store.create(None, label="next").files == ("README.md",)


def test_gitignore_edit_makes_newly_visible_files_known_but_not_created(
        ws: Path, store: CheckpointStore) -> None:
    first = store.create(None, label="baseline")
    write(ws, ".gitignore", "build/\n")  # debug.log is no longer ignored
    cp = store.create(None, label="next")
    assert "debug.log" in cp.files
    store.restore(first.id)
    assert (ws / "debug.log").read_text() == "noise\n"  # it existed all along: not deleted


def test_a_command_checkpoint_is_cheap_when_nothing_changed(ws: Path, store: CheckpointStore,
                                                             scans: list[str]) -> None:
    store.create(None, label="baseline")
    scans.clear()
    cp = store.create(None, label="idle")
    assert cp.files == () and scans == []


def test_files_written_right_before_the_checkpoint_are_seen(
        ws: Path, store: CheckpointStore, scans: list[str]) -> None:
    """No timing involved: the checkpoint reads the watcher's queue empty itself, and the kernel
    queues an event before the write returns. Seen by the watcher, not by a fallback scan."""
    each_write_is_seen(ws, store, scans, [f"burst/{i % 3}/{i}.txt" for i in range(100)])


def each_write_is_seen(ws: Path, store: CheckpointStore, scans: list[str],
                       new_files: list[str]) -> None:
    """Round after round, a new file and an edit just before a command checkpoint: each is in
    that checkpoint, found without a full scan."""
    store.create(None, label="baseline")
    scans.clear()
    for i, name in enumerate(new_files):
        write(ws, name, str(i))
        write(ws, "src/app.py", f"edit {i}\n")
        cp = store.create(None, label=f"after {i}")
        assert set(cp.files) == {name, "src/app.py"}
    assert "" not in scans


def test_a_watcher_that_lets_events_gather_misses_nothing_and_stops_at_once(
        ws: Path, store: CheckpointStore, scans: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """While idle, the watcher's thread lets events gather before it reads them (fewer wakes
    competing with the calls). A checkpoint does not depend on it, and a stop does not wait."""
    monkeypatch.setattr(inotify_tracker, "IDLE_LINGER_MS", 60_000)
    each_write_is_seen(ws, store, scans, [f"gathered/{i}.txt" for i in range(20)])
    write(ws, "src/util.py", "the thread is now lingering on this event\n")
    watcher = store._tracker._thread  # type: ignore[union-attr]
    assert watcher is not None and watcher.is_alive()
    store.close()  # it gives the thread 5 s to end
    assert not watcher.is_alive(), "the stop waited out the linger"


def test_file_checkpoints_also_pick_up_dirty_paths(ws: Path, store: CheckpointStore) -> None:
    store.create(None, label="baseline")
    write(ws, "README.md", "edited by a command\n")
    cp = store.create(["src/app.py"], label="before write_file")
    assert set(cp.files) == {"src/app.py", "README.md"}


def test_store_inside_the_workspace_is_ignored(ws: Path, make_store: StoreFactory) -> None:
    store = make_store(ws, state_dir=ws / ".intentd-state")
    first = store.create(None, label="baseline")
    assert not any(p.startswith(".intentd-state") for p in first.files)
    write(ws, "README.md", "x\n")
    assert store.create(None, label="next").files == ("README.md",)
    assert os.path.isdir(ws / ".intentd-state")


def test_names_that_are_not_utf8_are_skipped_not_fatal(ws: Path, store: CheckpointStore) -> None:
    bad = os.fsencode(ws) + b"/caf\xe9.txt"
    with open(bad, "wb") as handle:
        handle.write(b"latin-1 name")
    cp = store.create(None, label="baseline")
    assert [why for path, why in cp.skipped if path.startswith("caf")] == ["file name is not valid UTF-8"]
    assert "README.md" in cp.files


def test_an_edit_the_watcher_saw_is_read_though_a_scan_trusts_the_stat_cache(
        ws: Path, store: CheckpointStore, scans: list[str]) -> None:
    """An agent writes src/app.py, sets its mtime back (same size), and touches a .gitignore,
    which makes the next checkpoint a full scan that trusts size and mtime. The watcher saw the
    write: that file is read, so a restore brings the person's text back."""
    hour_ago = time.time_ns() - 3600 * 10**9
    for path in ("src/app.py", ".gitignore"):
        os.utime(ws / path, ns=(hour_ago, hour_ago))
    baseline = store.create(None, label="before the agent")
    scans.clear()
    write(ws, "src/app.py", "print('HI')\n")  # same size
    os.utime(ws / "src/app.py", ns=(hour_ago, hour_ago))
    with open(ws / ".gitignore", "a") as handle:
        handle.write("*.tmp\n")
    after = store.create(None, label="after the agent")
    assert "" in scans, "the rules changed: a full scan"
    assert "src/app.py" in after.files
    store.restore(baseline.id)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"


def test_a_policy_change_makes_the_next_command_checkpoint_scan(
        ws: Path, make_store: StoreFactory, scans: list[str]) -> None:
    """Un-ignoring a file in .orchestration/ignore changes no file the watcher sees: the rules'
    fingerprint must force the scan that records it, or deleting it could not be undone."""
    write(ws, "notes/plan.md", "the plan\n")
    policy = {"now": PolicyIgnore((".orchestration/ignore",), ("notes/",))}
    store = make_store(ws, ignore_rules=lambda: policy["now"])
    assert store.watching
    first = store.create(None, label="baseline")
    assert "notes/plan.md" not in first.files
    policy["now"] = PolicyIgnore()  # the person un-ignores notes/
    scans.clear()
    cp = store.create(None, label="before rm -r notes")
    assert "" in scans and "notes/plan.md" in cp.files
    scans.clear()
    assert store.create(None, label="idle").files == () and scans == []  # once is enough
    shutil.rmtree(ws / "notes")
    store.restore(cp.id)
    assert (ws / "notes/plan.md").read_text() == "the plan\n"
    store.restore(first.id)  # it existed all along (just hidden): not deleted
    assert (ws / "notes/plan.md").exists()


def test_a_moved_folder_stays_watched_under_its_new_name(ws: Path, store: CheckpointStore,
                                                         scans: list[str]) -> None:
    store.create(None, label="baseline")
    write(ws, "src/deep/er.py", "x\n")
    store.create(None, label="new folder")
    os.rename(ws / "src", ws / "lib")
    store.create(None, label="after mv")
    scans.clear()
    write(ws, "lib/deep/er.py", "edited under the new name\n")
    write(ws, "lib/app.py", "edited too\n")
    cp = store.create(None, label="edits")
    assert set(cp.files) == {"lib/deep/er.py", "lib/app.py"} and "" not in scans
    shutil.move(str(ws / "lib"), str(ws.parent / "gone"))  # moved out of the workspace
    cp = store.create(None, label="moved out")
    assert set(cp.files) == {"lib/deep/er.py", "lib/app.py", "lib/util.py"}
    write(ws.parent / "gone", "app.py", "changes out there are not ours\n")
    assert store.create(None, label="idle").files == ()
