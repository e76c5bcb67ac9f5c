"""Before a command that should change nothing, the latest checkpoint serves when nothing has
changed since it; any change since (the person's own edits) makes a new one that records it."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore

from .conftest import StoreFactory, write


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "scan"])
def test_nothing_changed_the_latest_checkpoint_serves(ws: Path, make_store: StoreFactory,
                                                      watch: bool) -> None:
    store = make_store(ws, watch=watch)
    first, created = store.latest_or_create(label="before ls")
    assert created, "the workspace's first checkpoint is new"
    again, created = store.latest_or_create(label="before cat")
    assert (again.id, created) == (first.id, False)
    assert [c.id for c in store.list()] == [first.id], "no empty checkpoint per read"


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "scan"])
def test_a_change_since_makes_a_new_checkpoint_that_holds_it(ws: Path, make_store: StoreFactory,
                                                             watch: bool) -> None:
    store = make_store(ws, watch=watch)
    first, _ = store.latest_or_create(label="before ls")
    write(ws, "README.md", "# the person's edit\n")
    second, created = store.latest_or_create(label="before cat")
    assert created and second.id != first.id and "README.md" in second.files
    # what a command does after it is all a diff against it shows: the edit is not in it
    write(ws, "stray.txt", "written by the read\n")
    assert [d.path for d in store.diff(second.id)] == ["stray.txt"]
    store.restore(second.id)  # the whole workspace back to the checkpoint
    assert not (ws / "stray.txt").exists()
    assert (ws / "README.md").read_text() == "# the person's edit\n"


def test_a_served_checkpoint_still_sees_the_next_change(ws: Path, store: CheckpointStore) -> None:
    """Serving the latest checkpoint drains the watcher as a new one would: a change after it
    is still found, and one the read made is undone from the checkpoint served."""
    first, _ = store.latest_or_create(label="before ls")
    served, created = store.latest_or_create(label="before cat")
    assert served.id == first.id and not created
    write(ws, "src/app.py", "print('changed by the read')\n")
    assert [(d.path, d.status) for d in store.diff(served.id)] == [("src/app.py", "modified")]
    store.restore(served.id, path="src/app.py")
    assert (ws / "src" / "app.py").read_text() == "print('hi')\n"
    third, created = store.latest_or_create(label="before grep")
    assert created, "the restore's safety checkpoint came after: nothing served may hide a change"
    assert store.diff(third.id) == []


def test_a_checkpoint_another_process_took_serves_too(ws: Path, make_store: StoreFactory) -> None:
    """The daemon remembers the newest checkpoint between calls; one that another process (the
    command line) took on the same store since is the newest, and what it recorded is known."""
    daemon = make_store(ws, watch=False)
    first, _ = daemon.latest_or_create(label="before ls")
    write(ws, "README.md", "# the person's edit\n")
    other = make_store(ws, watch=False)  # same store folder, its own connection
    second, created = other.latest_or_create(label="before cat, elsewhere")
    assert created and "README.md" in second.files
    third, created = daemon.latest_or_create(label="before grep")
    assert (third.id, created) == (second.id, False), "the other process's checkpoint serves"
    write(ws, "README.md", "# edited again\n")
    fourth, created = other.latest_or_create(label="before wc, elsewhere")
    assert created and fourth.id != second.id
    latest, created = daemon.latest_or_create(label="before du")
    assert (latest.id, created) == (fourth.id, False)
