"""Where a read-only git command would find a repository whose config the agent could have written.

git obeys the config of the repository it finds (`diff.external`, `core.fsmonitor`,
`core.pager` run programs). From the folder it starts in, git looks upward for a `.git`
or for a folder that looks like a bare repository (`HEAD`, `objects/`, `refs/`). The
agent can write such files anywhere in its scope, so a git command that starts in a
folder of the workspace other than the root's own repository is never auto-approved
when it could meet one: a nested `.git` below the root, a `HEAD` (a file, or a symbolic
link, which git accepts even when it points nowhere) or a `config` file, or a folder that
does not exist yet (an earlier part of the command could make a repository there).
This is the only module of the command policy that looks at the disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

_MAX_FOLDERS = 64  # folders checked per command; past that a person decides


def planted_git_config(root: str, cwd: str, starts: Iterable[str]) -> list[str]:
    """Reasons why git, started in each of `starts` (relative to `cwd`), could read a
    repository inside the workspace `root` that is not the root's own."""
    real_root = os.path.realpath(root)
    reasons: list[str] = []
    for count, start in enumerate(dict.fromkeys(starts)):
        if count >= _MAX_FOLDERS:
            return reasons + ["git starts in too many folders to check for planted repositories"]
        folder = os.path.realpath(os.path.join(cwd, os.path.expanduser(start) if start else ""))
        reason = _first_planted(real_root, folder)
        if reason is not None:
            reasons.append(f"git in `{start or '.'}`: {reason}")
    return reasons


def _first_planted(root: str, folder: str) -> str | None:
    """Walk from `folder` up to `root`, as git's discovery does."""
    if folder != root and not folder.startswith(root + os.sep):
        return None  # outside the workspace: the path checks send it to a person already
    if not os.path.isdir(folder):
        return (f"`{os.path.relpath(folder, root)}` is not a folder yet; the command could "
                "make a repository there before git starts")
    current = folder
    while True:
        where = os.path.relpath(current, root)
        if os.path.lexists(os.path.join(current, ".git")):
            if current == root:
                return None  # the workspace's own repository, which agents may not write
            return f"`{where}` is a repository nested in the workspace; git would obey its config"
        for name in ("HEAD", "config"):
            if _could_be_read(os.path.join(current, name), name):
                return (f"`{os.path.join(where, name)}` could make git read a repository "
                        "the agent wrote, and obey its config")
        if current == root:
            return None
        current = os.path.dirname(current)


def _could_be_read(path: str, name: str) -> bool:
    """Whether git could take `path` for a repository's file. A `HEAD` that is a symbolic
    link to `refs/…` makes a repository even when the link points nowhere, and such a
    repository's config may sit elsewhere (its `commondir` names the folder)."""
    if name == "HEAD" and os.path.islink(path):
        return True
    return os.path.isfile(path)
