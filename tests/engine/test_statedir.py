"""The state folder: every level intentd makes or owns is private, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.engine.ledger import Ledger
from intentd.daemon.utils.statedir import ensure_private, state_home, workspace_state_dir


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which a plain mkdir makes folders others can read."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_every_level_from_the_home_down_is_made_private(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "state" / "intentd"
    target = home / "workspaces" / "ws-1" / "checkpoints"
    assert ensure_private(target, home) == target
    for level in (tmp_path / "state", home, home / "workspaces", home / "workspaces" / "ws-1", target):
        assert mode(level) == 0o700, level


def test_existing_levels_in_the_home_are_tightened_and_those_above_left(
        tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "home"
    (home / "workspaces").mkdir(parents=True, mode=0o755)
    home.chmod(0o755)
    tmp_path.chmod(0o755)
    ensure_private(home / "workspaces" / "ws-1", home)
    assert mode(home) == mode(home / "workspaces") == mode(home / "workspaces" / "ws-1") == 0o700
    assert mode(tmp_path) == 0o755  # above the home: not ours to change


def test_outside_the_home_only_the_folder_itself_is_tightened(tmp_path: Path, umask_022: None) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    (shared / "store").mkdir(mode=0o755)
    ensure_private(shared / "store", tmp_path / "home")
    assert mode(shared) == 0o755 and mode(shared / "store") == 0o700


def test_the_ledger_and_its_folders_are_private(umask_022: None) -> None:
    path = workspace_state_dir(Path("/some/ws")) / "ledger.jsonl"
    ledger = Ledger(path)
    ledger.append({"call": 1})
    ledger.close()
    assert mode(path) == 0o600
    for level in (state_home(), state_home() / "workspaces", path.parent):
        assert mode(level) == 0o700, level


def test_a_ledger_written_before_is_tightened(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "ws" / "ledger.jsonl"
    path.parent.mkdir(mode=0o755)
    path.write_text("")
    path.chmod(0o644)
    Ledger(path).close()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
