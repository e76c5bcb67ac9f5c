"""Moving a repository a command made out of the workspace: whatever its folder's name, and
never through a folder swapped for a link (that would move a repository elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from intentd.daemon.sandbox.nested_git import NESTED, move_out


def test_a_repository_deep_in_long_names_is_moved_out(tmp_path: Path) -> None:
    folder = "/".join(["\N{GRINNING FACE}" * 60] * 2)  # 240 bytes a name: past any name's limit
    (tmp_path / "ws" / folder / ".git").mkdir(parents=True)
    (tmp_path / "ws" / folder / ".git" / "config").write_text("[core]\n\tfsmonitor = evil\n")
    moved = Path(move_out(str(tmp_path / "ws"), f"{folder}/.git", tmp_path / "keep"))
    assert moved.parent == tmp_path / "keep" / NESTED
    assert "fsmonitor = evil" in (moved / "config").read_text()
    assert not (tmp_path / "ws" / folder / ".git").exists()


def test_a_folder_swapped_for_a_link_moves_nothing_elsewhere(tmp_path: Path) -> None:
    """The person's repository outside the workspace, reached through a link the command made
    where its folder was: the move refuses, the repository stays."""
    (tmp_path / "person" / ".git").mkdir(parents=True)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "docs").symlink_to(tmp_path / "person")
    with pytest.raises(OSError):
        move_out(str(tmp_path / "ws"), "docs/.git", tmp_path / "keep")
    assert (tmp_path / "person" / ".git").is_dir()


def test_only_a_git_entry_is_moved(tmp_path: Path) -> None:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    with pytest.raises(ValueError):
        move_out(str(tmp_path / "ws"), "src", tmp_path / "keep")
    assert os.path.isdir(tmp_path / "ws" / "src")
