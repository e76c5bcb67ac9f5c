"""What changed since a moment that no watcher reports: writes through hard links, and the
`.git` entries of repositories made inside the workspace.

A file with two names is written under both at once, but inotify reports the write only in the
folder of the name written. `ln docs/guide.md ~/g; echo x > ~/g; rm ~/g` changes docs/guide.md
with no event in the workspace at all. What such a write cannot hide is the inode's change time:
ctime moves with every write, link and chmod, and no call sets it back (touch sets mtime, and
moves ctime doing so). Listing the files whose ctime is at or after a checkpoint's clock finds
every write since, seen or not.

It costs a stat of every file, what the full scan's listing costs, so only the scope audit of a
command that nothing confined asks for it; a command under Landlock cannot make a link across
folders.
"""

from __future__ import annotations

import os

from .ignore import CheckpointIgnore
from .listing import list_records
from .scan import scan


def changed_since(root: str, rules: CheckpointIgnore, since_ns: int) -> list[str]:
    """The files and symlinks that are not ignored whose inode changed at or after since_ns
    (nanoseconds since 1970, on the clock file times come from)."""
    try:
        with os.scandir(root) as entries:
            names = sorted(e.name for e in entries if e.name != ".git")
    except OSError:
        return []  # the workspace is gone: the audit's own look says so
    pruned = sorted(rules.skipped_folders)
    records = list_records(root, [n for n in names if n not in pruned], pruned, since_ns)
    if records is None:  # nothing lists the tree: walk it in Python
        return sorted(path for path, st in scan(root, rules).files.items()
                      if st.st_ctime_ns >= since_ns)
    # "TYPE SIZE MODE MTIME ./PATH"; sockets, pipes and devices are not files checkpoints keep
    paths = [record.partition(" ./")[2] for record in records if record[:1] in ("f", "l")]
    return sorted(rules.kept(paths))


def git_entries(root: str, folders: tuple[str, ...], skipped: tuple[str, ...]) -> set[str]:
    """Every `.git` entry (folder, file or link) in these folders of root ("": all of it) and
    beneath them, not looked into, for where no watcher kept the ones made: each makes its
    folder a repository, whose config and hooks git runs there. The folders in `skipped` (the
    store, when inside) are left out."""
    found: set[str] = set()
    for start in folders:
        for folder, dirs, files in os.walk(os.path.join(root, start) if start else root):
            rel = os.path.relpath(folder, root)
            prefix = "" if rel == "." else rel + "/"
            if ".git" in dirs or ".git" in files:
                found.add(prefix + ".git")
            dirs[:] = [d for d in dirs if d != ".git" and prefix + d not in skipped]
    return found
