"""What a workspace is: a folder a person made one (`intentd init`), holding `.orchestration/`.
A folder, not a symlink to one: an agent may make a symlink wherever it may write, and no
agent may write `.orchestration/` itself."""

from __future__ import annotations

import os
import stat
from pathlib import Path

PERSONS_FOLDER = ".orchestration"  # the person's intents, policy and ignore rules


def is_workspace(folder: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(folder / PERSONS_FOLDER).st_mode)
    except OSError:
        return False


def enclosing_workspace(folder: Path) -> Path | None:
    """The nearest workspace at or above `folder`, or None: an agent started in src/ works in
    the project's workspace, and the daemon opens no session on a workspace's sub-folder."""
    return next((p for p in (folder, *folder.parents) if is_workspace(p)), None)


def here() -> Path:
    """The default workspace of a command run in a folder: the workspace at or above it."""
    cwd = Path.cwd().resolve()
    return enclosing_workspace(cwd) or cwd
