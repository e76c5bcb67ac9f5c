"""The full-scan fallback's walk, done by GNU find: the tree is listed in C, Python only compares.

A Python walk pays an interpreter round trip per file (scandir entry, lstat, ignore check); at
50k files that made the fallback slower than `git add -A`. Here one `find` process lists every
entry with its type, size, mode and mtime, and Python compares those fields with the recorded
stat cache. Only what does not match is lstat'ed again, so the answer never rests on find's
text alone.

Ignore rules are checked for what the last walk of this process did not already accept (new
files and folders), as long as the rules' fingerprint is unchanged; when it changed, every
entry is checked again. Folders the last walk found ignored are pruned by find itself.
Where find is not GNU find (no -printf), FindWalker.walk returns None and the caller scans in
Python.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from .ignore import CheckpointIgnore, Frame, rules_digest
from .state import DiskStat, Entry, lstat

# Two fields per entry: the path, then "type size mode mtime" as one text, which is compared
# whole with the text the recorded entry would give (see expected()): one string comparison
# per unchanged file instead of parsing four numbers.
PRINTF = "%p\\0%y %s %m %T@\\0"  # %p: "./" and the path, since find runs in the workspace
MAX_JOBS = 4
Listing = tuple[list[str], list[str]]  # paths (workspace-relative), and find's attribute texts
MAX_PRUNED = 64  # ignored folders handed to find; past that find's per-entry tests cost more
_GLOB_CHARS = re.compile(r"([*?\[\]\\])")


@dataclass
class Walk:
    """present: every file and symlink that is not ignored; changed: those whose recorded stat
    cache does not vouch for them, lstat'ed; gitignores: (path, mtime_ns, size) of each
    .gitignore met, as scan() gives them."""

    present: set[str] = field(default_factory=set)
    changed: dict[str, DiskStat] = field(default_factory=dict)
    gitignores: list[tuple[str, int, int]] = field(default_factory=list)
    digest: str = ""


@cache
def gnu_find() -> str | None:
    """The path of a find that has -printf, or None."""
    program = shutil.which("find")
    if program is None:
        return None
    try:
        done = subprocess.run([program, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return program if b"GNU findutils" in done.stdout else None


class FindWalker:
    """Walks one workspace; remembers what its last whole walk accepted, and under which rules.

    remember=False keeps nothing between walks (every entry's ignore rules are checked each
    time): for a store whose watcher makes full scans rare, the memory is worth more.
    """

    def __init__(self, root: str, rules: CheckpointIgnore, remember: bool = True) -> None:
        self._root = root
        self._rules = rules
        self._remember = remember
        self._files: set[str] = set()    # accepted by the last walk (not ignored)
        self._dirs: set[str] = set()     # walked into by the last walk
        self._ignored: list[str] = []    # folders the last walk found ignored
        self._digest = ""                # the rules' fingerprint the sets above hold for

    def walk(self, known: Mapping[str, tuple[int, Entry]]) -> Walk | None:
        listing = self._list()
        if listing is None:
            return None
        exclude, extra = self._rules.exclude_key(), self._rules.extra_key()
        trusted = bool(self._digest)
        walk, dirs, ignored = self._filter(listing, known, trusted)
        walk.digest = rules_digest(walk.gitignores, exclude, extra)
        if trusted and walk.digest != self._digest:
            # A rule changed: list again without pruning what was ignored, check everything.
            self._ignored = []
            listing = self._list()
            if listing is None:
                return None
            walk, dirs, ignored = self._filter(listing, known, trusted=False)
            walk.digest = rules_digest(walk.gitignores, exclude, extra)
        if self._remember:
            self._files, self._dirs, self._ignored = walk.present, dirs, ignored
            self._digest = walk.digest
        return walk

    def _list(self) -> Listing | None:
        """Every path find lists and its attributes; None when there is no GNU find or it could not run.

        The top-level entries are shared among one find per CPU (at most MAX_JOBS), run at
        once: listing is mostly lstat calls, which git's preloaded index also spreads over
        the CPUs. Each entry's subtree still comes whole and in order from one of them.
        """
        program = gnu_find()
        if program is None:
            return None
        try:
            with os.scandir(self._root) as entries:
                names = sorted(e.name for e in entries if e.name != ".git")
        except OSError:
            return None
        pruned = {*self._rules.skipped_folders, *self._ignored[:MAX_PRUNED]}
        names = [name for name in names if name not in pruned]
        prune = ["-name", ".git"]
        for folder in sorted(pruned):
            prune += ["-o", "-path", "./" + _GLOB_CHARS.sub(r"\\\1", folder)]
        jobs = max(1, min(os.cpu_count() or 1, MAX_JOBS, len(names)))
        runs = [_Find([program, *("./" + n for n in names[i::jobs]), "(", *prune, ")",
                       "-prune", "-o", "-printf", PRINTF], self._root) for i in range(jobs)]
        paths: list[str] = []
        attributes: list[str] = []
        for run in runs:
            out = run.result()
            if out is None:
                return None
            paths += out[0]
            attributes += out[1]
        return paths, attributes

    def _filter(self, listing: Listing, known: Mapping[str, tuple[int, Entry]],
                trusted: bool) -> tuple[Walk, set[str], list[str]]:
        walk, dirs, ignored = Walk(), set(), []
        trusted_files = self._files if trusted else set()
        trusted_dirs = self._dirs if trusted else set()
        frames: dict[str, Frame | None] = {"": self._rules.root_frame()}
        new: list[str] = []
        candidates: list[str] = []
        inside_ignored = ""
        for rel, attributes in zip(*listing, strict=True):
            if inside_ignored:
                if rel.startswith(inside_ignored):
                    continue  # find lists a folder's contents right after the folder
                inside_ignored = ""
            kind = attributes[:1]
            if kind == "d":
                if rel in trusted_dirs or self._rules.frame_in(rel, frames) is not None:
                    dirs.add(rel)
                else:
                    ignored.append(rel)
                    inside_ignored = rel + "/"
                continue
            if kind != "f" and kind != "l":
                continue  # sockets, pipes, devices: scan() leaves them out too
            if rel in trusted_files:
                walk.present.add(rel)
            else:
                new.append(rel)  # kept() below decides whether it is ignored
            recorded = known.get(rel)
            if (recorded is None or attributes != expected(recorded[1])
                    or rel.endswith(".gitignore")):  # the digest wants its exact lstat
                candidates.append(rel)
        walk.present.update(self._rules.kept(new, frames))
        self._check(candidates, known, walk)
        return walk, dirs, ignored

    def _check(self, candidates: list[str], known: Mapping[str, tuple[int, Entry]],
               walk: Walk) -> None:
        """lstat what find could not vouch for; keep it when it is (still) a file or a link."""
        for rel in candidates:
            if rel not in walk.present:
                continue  # ignored
            st = lstat(os.path.join(self._root, rel))
            if st is None or st.kind not in ("file", "link"):
                walk.present.discard(rel)  # gone or no longer a file since find listed it
                continue
            if rel.rpartition("/")[2] == ".gitignore":
                walk.gitignores.append((rel, st.mtime_ns, st.size))
            recorded = known.get(rel)
            if recorded is None or not st.matches(recorded[1]):
                walk.changed[rel] = st


class _Find:
    """One find process, its output read by a thread (so that no pipe fills while another
    process is being read)."""

    def __init__(self, command: list[str], cwd: str) -> None:
        self._out: Listing | None = None
        try:
            self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
                command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
        except OSError:
            self._process = None
            return
        self._thread = threading.Thread(target=self._read, name="intentd-find", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._process is not None
        data, _ = self._process.communicate()
        # exit status 1: some folder could not be read, which scan() skips too
        if self._process.returncode not in (0, 1):
            return
        fields = os.fsdecode(data).split("\0")
        fields.pop()  # after the last separator
        if len(fields) % 2 == 0:
            self._out = ([path[2:] for path in fields[0::2]], fields[1::2])

    def result(self) -> Listing | None:
        if self._process is None:
            return None
        self._thread.join()
        return self._out


def expected(entry: Entry) -> str:
    """The "type size mode mtime" text find prints for a path that the entry's stat cache
    vouches for; "" (which find never prints) when it cannot vouch."""
    mtime = entry.mtime_ns
    if mtime < 0:
        return ""
    if entry.kind == "link":
        kind, mode = "l", "777"
    elif entry.kind in ("file", "skipped"):
        kind, mode = "f", f"{entry.perm:o}"
    else:
        return ""
    return f"{kind} {entry.size} {mode} {mtime // 1_000_000_000}.{mtime % 1_000_000_000:09d}0"
