"""Checkpoints before a file tool: create, list, get, diff, restore the paths it names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore, InvalidPath, UnknownCheckpoint

from .conftest import tree, write


def test_create_saves_named_paths_and_lists_them(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(["src/app.py", "new.py"], label="before write_file")
    assert cp.kind == "files" and cp.label == "before write_file"
    assert cp.id.startswith("cp-") and set(cp.files) >= {"src/app.py", "new.py"}
    assert store.list() == [cp]
    assert store.get(cp.id) == cp
    assert store.get(cp.id.removeprefix("cp-").lstrip("0")) == cp  # "1" names cp-000001


def test_restore_brings_back_content_and_deletes_what_the_tool_created(
        ws: Path, store: CheckpointStore) -> None:
    before = tree(ws)
    cp = store.create(["src/app.py", "src/new.py"], label="edit")
    write(ws, "src/app.py", "print('changed')\n")
    write(ws, "src/new.py", "created by the agent\n")
    result = store.restore(cp.id)
    assert result.restored == ("src/app.py",)
    assert result.deleted == ("src/new.py",)
    assert tree(ws) == before


def test_diff_against_current_shows_unified_diffs(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(["src/app.py", "notes.txt", "src/util.py"], label="edit")
    write(ws, "src/app.py", "print('bye')\n")
    write(ws, "notes.txt", "hello\n")
    (ws / "src/util.py").unlink()
    diffs = {d.path: d for d in store.diff(cp.id)}
    assert diffs["src/util.py"].status == "deleted" and "-    return 1" in diffs["src/util.py"].unified
    assert diffs["src/app.py"].status == "modified"
    assert "-print('hi')\n+print('bye')\n" in diffs["src/app.py"].unified
    assert diffs["notes.txt"].status == "added"
    assert "--- /dev/null" in diffs["notes.txt"].unified
    assert [d.path for d in store.diff(cp.id, path="src")] == ["src/app.py", "src/util.py"]


def test_diff_against_next_checkpoint(ws: Path, store: CheckpointStore) -> None:
    first = store.create(["src/app.py"], label="one")
    write(ws, "src/app.py", "v2\n")
    store.create(["src/app.py"], label="two")
    write(ws, "src/app.py", "v3\n")
    (diff,) = store.diff(first.id, against="next")
    assert "+v2" in diff.unified and "v3" not in diff.unified
    (now,) = store.diff(first.id)
    assert "+v3" in now.unified


def test_executable_bit_and_symlinks_come_back(ws: Path, store: CheckpointStore) -> None:
    write(ws, "run.sh", "#!/bin/sh\n", mode=0o755)
    os.symlink("src/app.py", ws / "link")
    cp = store.create(["run.sh", "link"], label="chmod")
    os.chmod(ws / "run.sh", 0o644)
    os.unlink(ws / "link")
    os.symlink("elsewhere", ws / "link")
    diffs = {d.path: d for d in store.diff(cp.id)}
    assert "old mode 100755\nnew mode 100644" in diffs["run.sh"].unified
    store.restore(cp.id)
    assert os.stat(ws / "run.sh").st_mode & 0o777 == 0o755
    assert os.readlink(ws / "link") == "src/app.py"


def test_a_folder_path_saves_every_file_in_it(ws: Path, store: CheckpointStore) -> None:
    before = tree(ws)
    cp = store.create(["src"], label="delete_directory")
    assert {"src/app.py", "src/util.py"} <= set(cp.files)
    for name in ("app.py", "util.py"):
        (ws / "src" / name).unlink()
    (ws / "src").rmdir()
    store.restore(cp.id)
    assert tree(ws) == before


def test_restore_one_path_leaves_the_others(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(["src/app.py", "src/util.py"], label="edit")
    write(ws, "src/app.py", "x\n")
    write(ws, "src/util.py", "y\n")
    result = store.restore(cp.id, path="src/app.py")
    assert result.restored == ("src/app.py",)
    assert (ws / "src/app.py").read_text() == "print('hi')\n"
    assert (ws / "src/util.py").read_text() == "y\n"
    with pytest.raises(InvalidPath, match="holds no state"):
        store.restore(cp.id, path="docs/never-seen.md")


def test_bad_paths_are_skipped_with_a_reason(ws: Path, store: CheckpointStore) -> None:
    cp = store.create(["../outside", "/etc/passwd", ".git/config", "debug.log", "build/x"],
                      label="bad")
    reasons = dict(cp.skipped)
    assert "not inside the workspace" in reasons["../outside"]
    assert "not inside the workspace" in reasons["/etc/passwd"]
    assert ".git" in reasons[".git/config"]
    assert "ignored" in reasons["debug.log"] and "ignored" in reasons["build/x"]
    assert cp.files == ()


def test_a_symlinked_folder_is_not_followed(ws: Path, tmp_path: Path, store: CheckpointStore) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.txt", "secret\n")
    os.symlink(outside, ws / "door")
    cp = store.create(["door/secret.txt"], label="through a symlink")
    assert "symlink" in dict(cp.skipped)["door/secret.txt"]


def test_unknown_ids_are_clear_errors(store: CheckpointStore) -> None:
    store.create(["README.md"], label="one")
    for bad in ("cp-000099", "nonsense", ""):
        with pytest.raises(UnknownCheckpoint):
            store.get(bad)
        with pytest.raises(UnknownCheckpoint):
            store.restore(bad)
        with pytest.raises(UnknownCheckpoint):
            store.diff(bad)


def test_binary_files_say_so(ws: Path, store: CheckpointStore) -> None:
    write(ws, "img.png", b"\x89PNG\0\0data")
    cp = store.create(["img.png"], label="edit")
    write(ws, "img.png", b"\x89PNG\0\0other")
    (diff,) = store.diff(cp.id)
    assert "Binary files a/img.png and b/img.png differ" in diff.unified


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_copied(
        ws: Path, tmp_path: Path, store: CheckpointStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check that no parent is a symlink passes; then the agent swaps src for a symlink to
    a folder of secrets before the file is opened: the store must not copy what it reads there."""
    write(tmp_path / "secrets", "app.py", "the person's private key\n")
    real = store._recorder.escapes

    def then_swap(rel: str) -> bool:
        answer = real(rel)
        if (ws / "src").is_dir() and not (ws / "src").is_symlink():
            os.rename(ws / "src", ws / "src.moved")
            os.symlink(tmp_path / "secrets", ws / "src")
        return answer

    monkeypatch.setattr(store._recorder, "escapes", then_swap)
    cp = store.create(["src/app.py"], label="before write_file")
    assert "src/app.py" in dict(cp.skipped) and "symlink" in dict(cp.skipped)["src/app.py"]
    assert not any("private key" in d.unified for d in store.diff(cp.id))
