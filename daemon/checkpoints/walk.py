"""The full-scan fallback's walk: the tree is listed in C (or by GNU find), Python only compares.

A Python walk pays an interpreter round trip per file (scandir entry, lstat, ignore check); at
50k files that made the fallback slower than `git add -A`. Here the tree is listed as one record
per entry, "type size mode mtime inode ./path" (see listing.py), and Python compares records, not files
(a record whole: one string comparison or set lookup per unchanged file, no numbers parsed):

- the first walk (and any walk after the ignore rules changed) compares each record with the
  text the recorded entry would give (see expected()) and checks the ignore rules;
- a later walk of a store that keeps its memory (one with no file watcher, where every command
  checkpoint is a full scan) first drops every record the last walk settled, a set lookup in C
  per entry. Only the records left (new or changed entries) and the settled records that are gone
  (deleted or changed entries) are looked at in Python. A .gitignore among them, or a changed
  .git/info/exclude or policy rule, sends the walk back to checking everything.

Whatever a record does not vouch for is lstat'ed again, so the answer never rests on it alone,
and so is every path the store recorded since the last walk (see RecordWalker.recorded).
A record marked recent ("+": its inode changed since the last checkpoint that covered the
whole workspace, see listing.py) vouches for nothing: an agent can set a file's size and mtime
back, not its ctime. Such a file is given as changed, to be read.
Where nothing can list the tree (no native lister and no GNU find), RecordWalker.walk returns
None and the caller scans in Python.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .ignore import CheckpointIgnore, Frame, rules_digest
from .listing import list_records
from .state import INO_BITS, DiskStat, Entry, lstat

MAX_PRUNED = 64  # ignored folders left out of a listing; past that, find's per-entry tests cost more
Known = Mapping[str, tuple[int, Entry]]


@dataclass
class Walk:
    """changed: every file and symlink that is not ignored and whose recorded stat cache does not
    vouch for it, lstat'ed; gone: recorded paths the walk did not find (deleted, ignored now, or
    no longer a file: the caller looks again); gitignores: (path, mtime_ns, size) of each
    .gitignore met, as scan() gives them. present: every file and symlink that is not ignored,
    given only by a walk that checked every record (checked=True)."""

    changed: dict[str, DiskStat] = field(default_factory=dict)
    recent: set[str] = field(default_factory=set)  # known files whose stat cache cannot vouch
    gone: set[str] = field(default_factory=set)
    gitignores: list[tuple[str, int, int]] = field(default_factory=list)
    digest: str = ""
    present: set[str] = field(default_factory=set)
    checked: bool = True


class RecordWalker:
    """Walks one workspace. With remember=True it keeps the records its last walk settled (and
    under which rules) so that the next walk looks only at what differs; remember=False keeps
    nothing between walks: for a store whose watcher makes full scans rare, the memory is
    worth more."""

    def __init__(self, root: str, rules: CheckpointIgnore, remember: bool = True) -> None:
        self._root = root
        self._rules = rules
        self._remember = remember
        self._settled: set[str] = set()  # records that need no second look while rules hold
        self._ignored: list[str] = []       # folders the last walk found ignored
        self._gitignores: list[tuple[str, int, int]] = []
        self._digest = ""                   # the rules' fingerprint the memory above holds for
        self._keys = ("", "")               # .git/info/exclude's and the policy's, then
        self._recorded: set[str] = set()    # paths recorded since the last walk: looked at again

    def recorded(self, paths: Iterable[str]) -> None:
        """The store recorded these paths outside a walk (or a walk's changes): the next walk
        lstats them whatever their records say (an entry recorded while its file was being
        written vouches for nothing)."""
        if self._remember:
            self._recorded.update(paths)

    def reset(self) -> None:
        """Forget every walk (the store's recorded state was reloaded): the next checks everything."""
        self._settled, self._ignored, self._gitignores = set(), [], []
        self._digest, self._recorded = "", set()

    def walk(self, known: Known, recent_ns: int | None = None) -> Walk | None:
        """recent_ns: files whose inode changed at or after it are given as changed, whatever
        their stat cache says."""
        keys = (self._rules.exclude_key(), self._rules.extra_key())
        records = self._list(recent_ns)
        if records is None:
            return None
        if self._remember and self._digest and keys == self._keys:
            walk = self._walk_changes(records, known)
            if walk is not None:
                return walk
        if self._digest:
            # A rule may have changed: list again without pruning what was ignored, check all.
            self._ignored = []
            records = self._list(recent_ns)
            if records is None:
                return None
        walk, settled, ignored = self._walk_all(records, known)
        walk.digest = rules_digest(walk.gitignores, *keys)
        if self._remember:
            self._settled, self._ignored, self._gitignores = settled, ignored, walk.gitignores
            self._digest, self._keys, self._recorded = walk.digest, keys, set(walk.changed)
        return walk

    def _list(self, recent_ns: int | None = None) -> list[str] | None:
        """The records of every entry not pruned, a folder's contents right after it; None when
        the tree could not be listed."""
        try:
            with os.scandir(self._root) as entries:
                names = sorted(e.name for e in entries if e.name != ".git")
        except OSError:
            return None
        pruned = {*self._rules.skipped_folders, *self._ignored[:MAX_PRUNED]}
        return list_records(self._root, [name for name in names if name not in pruned],
                            sorted(pruned), recent_ns=recent_ns)

    def _walk_all(self, records: list[str], known: Known) -> tuple[Walk, set[str], list[str]]:
        """Check every record: the ignore rules, and the recorded entry's text."""
        walk, ignored = Walk(), []
        frames: dict[str, Frame | None] = {"": self._rules.root_frame()}
        files: list[str] = []
        unsure: dict[str, str] = {}  # path: record, of files whose record cannot vouch
        gitignores: list[str] = []
        inside_ignored = ""
        for record in records:
            attributes, _, rel = record.partition(" ./")
            recent = attributes[:1] == "+"
            if recent:
                attributes = attributes[1:]
            if inside_ignored:
                if rel.startswith(inside_ignored):
                    continue  # a folder's contents come right after the folder
                inside_ignored = ""
            kind = attributes[:1]
            if kind == "d":
                if self._rules.frame_in(rel, frames) is None:
                    ignored.append(rel)
                    inside_ignored = rel + "/"
                continue
            if kind != "f" and kind != "l":
                continue  # sockets, pipes, devices: scan() leaves them out too
            files.append(rel)
            recorded = known.get(rel)
            if recent and recorded is not None:
                walk.recent.add(rel)
            if recorded is None or recent or attributes != expected(recorded[1]):
                unsure[rel] = record
            elif rel.rpartition("/")[2] == ".gitignore":
                gitignores.append(rel)  # the digest wants its exact lstat
        walk.present = set(self._rules.kept(files, frames))
        self._check((rel for rel in (*unsure, *gitignores) if rel in walk.present), known, walk)
        walk.gone.update(p for p in known if p not in walk.present)
        settled = set(records)
        settled.difference_update(unsure.values())
        return walk, settled, ignored

    def _walk_changes(self, records: list[str], known: Known) -> Walk | None:
        """Look only at records the last walk did not settle and at settled ones now missing;
        None when the rules may have changed (a .gitignore among them)."""
        settled = self._settled
        fresh = [record for record in records if record not in settled]
        missing = len(settled) - (len(records) - len(fresh))  # settled records not listed now
        walk = Walk(gitignores=self._gitignores, digest=self._digest, checked=False)
        frames: dict[str, Frame | None] = {"": self._rules.root_frame()}
        files: dict[str, str] = {}
        replaced: list[str] = []  # settled records of files that changed since
        for record in fresh:
            attributes, _, rel = record.partition(" ./")
            recent = attributes[:1] == "+"
            if recent:
                attributes = attributes[1:]
            kind = attributes[:1]
            if kind == "d":
                if self._rules.frame_in(rel, frames) is None:
                    self._ignored.append(rel)  # left out of the next listing
            elif kind == "f" or kind == "l":
                if rel.rpartition("/")[2] == ".gitignore":
                    return None
                recorded = known.get(rel)
                text = expected(recorded[1]) if recorded is not None else ""
                if recent and recorded is not None:
                    walk.recent.add(rel)
                elif attributes == text:
                    files[rel] = ""  # vouched for
                    continue
                files[rel] = record
                if f"{text} ./{rel}" in settled:
                    replaced.append(f"{text} ./{rel}")
        kept = set(self._rules.kept(files, frames))
        unsure = {rel: files[rel] for rel in kept if files[rel]}
        self._check({*unsure, *self._rules.kept(self._recorded, frames)}, known, walk)
        settled.difference_update(replaced)
        if missing > len(replaced):  # something settled was deleted (or changed past knowing)
            now = set(records)
            for record in settled - now:
                attributes, _, rel = record.partition(" ./")
                if rel.rpartition("/")[2] == ".gitignore":
                    return None
                if attributes[:1] in ("f", "l") and rel not in kept and rel in known:
                    walk.gone.add(rel)
            settled = now
        else:
            settled.update(fresh)
        settled.difference_update(unsure.values())
        self._settled, self._recorded = settled, set(walk.changed)
        return walk

    def _check(self, candidates: Iterable[str], known: Known, walk: Walk) -> None:
        """lstat what the records could not vouch for; keep it when it is (still) a file or a link."""
        for rel in candidates:
            st = lstat(os.path.join(self._root, rel))
            if st is None or st.kind not in ("file", "link"):
                walk.present.discard(rel)  # gone or no longer a file since it was listed
                if rel in known:
                    walk.gone.add(rel)
                continue
            if walk.checked and rel.rpartition("/")[2] == ".gitignore":
                walk.gitignores.append((rel, st.mtime_ns, st.size))
            recorded = known.get(rel)
            if recorded is None or rel in walk.recent or not st.matches(recorded[1]):
                walk.changed[rel] = st


def expected(entry: Entry) -> str:
    """The "type size mode mtime inode" text listed for a path that the entry's stat cache
    vouches for; "" (which no record holds) when it cannot vouch."""
    mtime = entry.mtime_ns
    if mtime < 0 or entry.ino == 0:
        return ""
    if entry.kind == "link":
        kind, mode = "l", "777"
    elif entry.kind in ("file", "skipped"):
        kind, mode = "f", f"{entry.perm:o}"
    else:
        return ""
    return (f"{kind} {entry.size} {mode} {mtime // 1_000_000_000}.{mtime % 1_000_000_000:09d}0"
            f" {entry.ino & INO_BITS}")
