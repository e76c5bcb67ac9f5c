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
import re
from collections.abc import Callable, Iterable

from intentd.daemon.utils.reading import read_regular

from .ignore import MAX_RULES_BYTES, CheckpointIgnore, Frame
from .listing import list_records
from .scan import scan

PLAIN_NAME = re.compile(r"[^/*?\[\]\\!#\s]+")  # no glob, slash, negation, comment or space
MAX_NAMES = 32  # names pruned; each costs a comparison per folder listed


def changed_since(root: str, rules: CheckpointIgnore, since_ns: int,
                  known_under: Callable[[list[str]], Iterable[str]] = lambda folders: ()
                  ) -> list[str]:
    """The files and symlinks that are not ignored whose inode changed at or after since_ns
    (nanoseconds since 1970, on the clock file times come from). In a folder that cannot be
    listed (a command may take the right away after its write), the files known_under names
    for it are asked for by name."""
    frames: dict[str, Frame | None] = {"": rules.root_frame()}
    try:
        with os.scandir(root) as it:
            entries = [e for e in it if e.name != ".git"]
    except OSError:
        return []  # the workspace is gone: the audit's own look says so
    names = sorted(e.name for e in entries)
    # top-level folders the rules ignore (node_modules/, build/) hold nothing a checkpoint
    # keeps: they are not listed at all
    ignored = [e.name for e in entries
               if e.is_dir(follow_symlinks=False) and rules.frame_in(e.name, frames) is None]
    pruned = sorted({*rules.skipped_folders, *ignored})
    top = [n for n in names if n not in pruned]
    records = list_records(root, top, [*pruned, *(f"*/{n}" for n in _ignored_names(root))],
                           since_ns)
    if records is None:
        return _scanned(root, rules, since_ns)
    # A folder left out by its name (node_modules/ at any depth) is listed after all where the
    # rules do not ignore it there (a deeper .gitignore's `!`, a rule anchored elsewhere).
    # (Their marker is "n": a FIFO is "p", and read as a folder it was listed again, its record
    # added to the records being read, for ever.)
    for folder in [record.partition(" ./")[2] for record in records if record[:1] == "n"]:
        if rules.frame_in(folder, frames) is not None:
            parent, _, name = folder.rpartition("/")
            more = list_records(os.path.join(root, parent), [name], [], since_ns)
            if more is None:
                return _scanned(root, rules, since_ns)
            records += [record.replace(" ./", f" ./{parent}/", 1) for record in more]
    # "TYPE SIZE MODE MTIME ./PATH"; sockets, pipes and devices are not files checkpoints keep
    paths = [record.partition(" ./")[2] for record in records if record[:1] in ("f", "l")]
    unlistable = [record.partition(" ./")[2] for record in records if record[:1] == "u"]
    for path in known_under(unlistable) if unlistable else ():
        try:
            if os.lstat(os.path.join(root, path)).st_ctime_ns >= since_ns:
                paths.append(path)
        except OSError:
            continue  # gone, or a folder above cannot be searched either: nothing reads it
    return sorted(set(rules.kept(paths)))


def _scanned(root: str, rules: CheckpointIgnore, since_ns: int) -> list[str]:
    """changed_since where nothing can list the tree: Python's walk."""
    return sorted(path for path, st in scan(root, rules).files.items()
                  if st.st_ctime_ns >= since_ns)


def _ignored_names(root: str) -> list[str]:
    """The folder names the workspace's .gitignore ignores wherever they are (`node_modules/`,
    `__pycache__`): a line that is one plain name. A hint only: changed_since checks each
    folder it leaves out against the rules."""
    try:  # a command may have left a FIFO there: never waited on
        text = read_regular(os.path.join(root, ".gitignore"), MAX_RULES_BYTES).decode(
            "utf-8", "replace")
    except OSError:
        return []
    names = set()
    for line in text.splitlines():
        name = line.strip().removesuffix("/")
        if name and PLAIN_NAME.fullmatch(name) and name not in (".", "..", ".git"):
            names.add(name)
    return sorted(names)[:MAX_NAMES]


def git_entries(root: str, folders: tuple[str, ...], skipped: tuple[str, ...]) -> set[str]:
    """Every `.git` entry (folder, file or link) in these folders of root ("": all of it) and
    beneath them, not looked into, for where no watcher kept the ones made: each makes its
    folder a repository, whose config and hooks git runs there. The folders in `skipped` (the
    store, when inside) are left out. A folder that cannot be listed is still asked for its
    `.git` by name (searching needs no listing, and git needs no more)."""
    found: set[str] = set()
    stack = list(folders)
    while stack:  # not os.walk: a tree thousands of folders deep must not exhaust the stack
        rel = stack.pop()
        path = os.path.join(root, rel) if rel else root
        prefix = rel + "/" if rel else ""
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.name == ".git":
                        found.add(prefix + ".git")
                    elif (entry.is_dir(follow_symlinks=False)
                          and prefix + entry.name not in skipped):
                        stack.append(prefix + entry.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            try:
                os.lstat(os.path.join(path, ".git"))
                found.add(prefix + ".git")
            except OSError:
                pass
    return found
