"""Git's control files, compared around a command: read and put back without following a
symlink anywhere, and never put back from a copy that was not kept."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from intentd.daemon.sandbox import git_control


def repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


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
    now = git_control.snapshot(str(root))
    assert now is not None
    found = git_control.changes(before, now)
    assert found == [(".git/config", "deleted"), (".git/hooks/post-merge", "added"),
                     (".git/hooks/pre-push", "modified")]
    undone, left = git_control.put_back(str(root), before, [p for p, _ in found], tmp_path / "kept")
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
    now = git_control.snapshot(str(root))
    assert now is not None and not any(p.startswith(".git/hooks/") for p in now)
    undone, left = git_control.put_back(str(root), before, [".git/hooks/pre-commit"],
                                        tmp_path / "kept")
    assert undone == [] and [p for p, _ in left] == [".git/hooks/pre-commit"]
    assert (outside / "pre-commit").read_text() == "someone else's\n"


def test_a_config_too_big_to_keep_is_named_not_put_back(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    config = root / ".git" / "config"
    config.write_text("#" * (git_control.MAX_BYTES + 1))
    before = git_control.snapshot(str(root))
    assert before is not None
    config.write_text("[core]\n\tfsmonitor = evil\n")
    now = git_control.snapshot(str(root))
    assert now is not None
    assert git_control.changes(before, now) == [(".git/config", "modified")]
    undone, left = git_control.put_back(str(root), before, [".git/config"], tmp_path / "kept")
    assert undone == [] and "not kept" in left[0][1]
    assert "fsmonitor" in config.read_text()


def test_no_repository_no_snapshot(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's link file
    assert git_control.snapshot(str(tmp_path / "ws")) is None
