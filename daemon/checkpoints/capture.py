"""Which paths a new checkpoint looks at: the named ones, what the watcher saw change, or a full scan."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from . import subvolumes
from .dirty import DirtySnapshot, DirtyTracker
from .errors import InvalidPath
from .ignore import CheckpointIgnore, Frame, is_gitignore, rules_digest
from .inotify_tracker import InotifyTracker
from .known import Known as PackedKnown
from .manifest import Row
from .paths import in_git_dir, normalize
from .recorder import Known, Recorder
from .scan import ScanResult, scan
from .state import DiskStat, lstat, stat_matches, to_disk_stat
from .walk import RecordWalker

Frames = dict[str, Frame | None]  # the ignore rules of each folder, worked out once per capture

# The meta values that fingerprint the ignore rules a complete checkpoint was taken under.
RULE_KEYS = ("rules", "exclude", "extra")


@dataclass
class Capture:
    """The paths to record (with their stat), and what the resulting checkpoint may claim.

    complete: the checkpoint's known state covers every non-ignored file (so a file first seen
    later was absent then). rules: ignore-rule fingerprints to store, "" when unknown.
    """

    stats: dict[str, DiskStat | None] = field(default_factory=dict)
    explicit: set[str] = field(default_factory=set)
    # what the watcher reported changed: read whatever the stat cache says (trust_stat is a full
    # scan's, for the files nothing reported; an agent can set a file's size and mtime back)
    reported: set[str] = field(default_factory=set)
    # known files a scan found there but ignored now: their stat cache is dropped, since a
    # rule that hides a file across a whole checkpoint moves the ctime window past its edit
    hidden: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    complete: bool = False
    trust_stat: bool = False
    rules_changed: bool = True
    rules: dict[str, str] = field(default_factory=dict)
    coverage: str = ""  # how changes were found, when not by the watcher alone (Checkpoint.coverage)


class Capturer:
    """Builds a Capture from the tracker's snapshot, falling back to a full scan when it is unsure."""

    def __init__(self, root: str, rules: CheckpointIgnore, recorder: Recorder,
                 tracker: InotifyTracker | DirtyTracker | None,
                 covered_until: Callable[[], int]) -> None:
        """covered_until: when the last checkpoint that covered the whole workspace was taken
        (0: none was); a scan reads every file whose inode changed since, whatever its stat
        cache says, since an agent can set a file's size and mtime back but not its ctime."""
        self._root = root
        self._rules = rules
        self._recorder = recorder
        self._tracker = tracker
        self._covered_until = covered_until
        # Without a watcher every command checkpoint is a full scan: remember the last one.
        self._walker = RecordWalker(root, rules, remember=tracker is None)

    def capture(
        self,
        paths: Sequence[str] | None,
        prev: Row | None,
        known: Known,
        meta: dict[str, str],
        *,
        own_drain: bool,
        drain: bool,
    ) -> Capture:
        """own_drain: the tracker was last drained by the checkpoint `prev` (so it covers since then)."""
        snapshot = self._tracker.collect(drain=drain) if self._tracker is not None else None
        reliable = (snapshot is not None and prev is not None and prev.complete
                    and (own_drain or prev.created_ns >= snapshot.since_ns))
        result = Capture()
        frames: Frames = {"": self._rules.root_frame()}  # each folder's ignore rules, read once
        if paths is not None:
            self._named(paths, known, result, frames)
        if reliable and snapshot is not None:
            touched = self._dirty(snapshot, known, result, frames)
            result.reported.update(touched)
            result.rules_changed = self._rules_touched(touched, meta)
            result.rules = {} if not result.rules_changed else dict.fromkeys(RULE_KEYS, "")
            result.complete = not result.rules_changed
            if snapshot.unwatched and self._tracker is not None:
                result.coverage = _partial(snapshot, self._tracker.coverage().reason)
        if paths is None and not result.complete:  # a file tool's checkpoint needs only its paths
            result.coverage = "full scan: " + self._why_scan(snapshot, prev, reliable)
            self._full_scan(known, meta, result)
        return result

    def recorded(self, paths: Iterable[str]) -> None:
        """The store recorded these paths: a remembering walk looks at them again."""
        self._walker.recorded(paths)

    def reset(self) -> None:
        """The store reloaded its recorded state: walks remember nothing from before."""
        self._walker.reset()

    def _why_scan(self, snapshot: DirtySnapshot | None, prev: Row | None, reliable: bool) -> str:
        if self._tracker is None:
            return "no file watcher"
        if snapshot is None:
            return self._tracker.why_lost or "events may have been lost"
        if prev is None:
            return "the first checkpoint of this workspace"
        if not reliable:
            return "the previous checkpoint did not cover the whole workspace"
        return "the ignore rules changed"

    def _named(self, paths: Sequence[str], known: Known, result: Capture, frames: Frames) -> None:
        for raw in paths:
            try:
                rel = normalize(raw)
            except InvalidPath as exc:
                result.skipped.append((str(raw), str(exc)))
                continue
            why = self._refusal(rel, frames)
            if why:
                result.skipped.append((rel, why))
                continue
            st = lstat(os.path.join(self._root, rel))  # _refusal made sure no parent is a symlink
            if st is not None and st.kind == "dir":
                found = self._folders([rel], known)
                result.stats.update(found)
                result.explicit.update(found)
            else:
                result.stats[rel] = st
                result.explicit.add(rel)

    def _refusal(self, rel: str, frames: Frames) -> str:
        if in_git_dir(rel):
            return "inside a .git folder, which checkpoints never save"
        if self._recorder.escapes(rel):
            return "a parent folder is a symlink, so the path is not inside the workspace"
        if not self._rules.kept([rel], frames):
            return "ignored (.gitignore or ignore rules)"
        return ""

    def _folders(self, folders: Iterable[str], known: Known, unchanged: Known | None = None,
                 recent_ns: int = 0, hidden: list[str] | None = None,
                 recent: set[str] | None = None) -> dict[str, DiskStat | None]:
        """Every file under these folders now (scan() leaves out ignored ones), plus every known
        one that is gone; a known file that is merely ignored now keeps its record. With
        unchanged, files whose stat matches their entry there are left out (a scan, not events),
        unless they changed at or after recent_ns: their inode, or the folder a subvolume
        beneath was put into (subvolumes.py); those go in `recent` too."""
        folders = list(folders)
        found: dict[str, DiskStat | None] = {}
        seen: set[str] = set()
        devices = unchanged is not None and subvolumes.possible(self._root)
        for folder in folders:
            scanned = scan(self._root, self._rules, folder, devices=devices)
            put_in = subvolumes.under(self._put_in(folder, scanned, recent_ns)) if devices else ()
            for path, st in scanned.files.items():
                seen.add(path)
                changed = st.st_ctime_ns >= recent_ns or path.startswith(put_in)
                if (unchanged is None or (entry := unchanged.get(path)) is None
                        or not stat_matches(st, entry[1]) or changed):
                    found[path] = to_disk_stat(st)
                if changed and recent is not None:
                    recent.add(path)
        if isinstance(known, PackedKnown):  # matches folder keys, not every recorded path
            inside: Iterable[str] = known.under(folders)
        else:
            prefixes = ("",) if "" in folders else tuple(folder + "/" for folder in folders)
            inside = (p for p in known if p.startswith(prefixes))
        if folders:
            self._gone(known, (p for p in inside if p not in seen), found, hidden)
        return found

    def _put_in(self, folder: str, scanned: ScanResult, recent_ns: int) -> list[str]:
        """The folders of a scan (with devices) that subvolumes.put_in names; the workspace
        itself is the full scan's to judge (subvolumes.root_put_in)."""
        parents: dict[str, tuple[int, int]] = {}
        if folder:
            parent = folder.rpartition("/")[0]
            above = subvolumes.ancestry(self._root, parent)
            if above is not None:  # else a parent not seen vouches for nothing
                parents[parent] = above
        return subvolumes.put_in(scanned.folders, parents, recent_ns)

    def _gone(self, known: Known, paths: Iterable[str], stats: dict[str, DiskStat | None],
              hidden: list[str] | None = None) -> None:
        """Add the known present files among paths that a scan did not find: deleted ones, and
        ones found again (through a changed folder, say) unless they are ignored now; those
        go in `hidden`."""
        left = [p for p in paths if known[p][1].present]
        on_disk = {p: self._recorder.stat(p) for p in left}
        visible = set(self._rules.kept(p for p, st in on_disk.items() if st is not None))
        stats.update((p, st) for p, st in on_disk.items() if st is None or p in visible)
        if hidden is not None:
            hidden.extend(p for p, st in on_disk.items() if st is not None and p not in visible)

    def _dirty(self, snapshot: DirtySnapshot, known: Known, result: Capture,
               frames: Frames) -> list[str]:
        """Add the tracker's paths (folders expanded) that are not ignored, and what changed in
        the folders it cannot watch; returns them all."""
        touched = self._rules.kept(snapshot.files, frames)
        for rel in touched:
            if rel not in result.stats:
                result.stats[rel] = self._recorder.stat(rel)
        for rel, st in self._folders(snapshot.dirs, known).items():
            touched.append(rel)
            result.stats.setdefault(rel, st)
        if snapshot.unwatched:
            recent: set[str] = set()
            for rel, st in self._folders(snapshot.unwatched, known, unchanged=known,
                                         recent_ns=self._covered_until(), hidden=result.hidden,
                                         recent=recent).items():
                touched.append(rel)
                result.stats.setdefault(rel, st)
                if st is not None and rel in recent and rel in known:
                    result.reported.add(rel)
        return touched

    def _rules_touched(self, paths: Iterable[str], meta: dict[str, str]) -> bool:
        if (self._rules.exclude_key() != meta.get("exclude")
                or self._rules.extra_key() != meta.get("extra", "")):
            return True
        return any(is_gitignore(path) for path in paths)

    def _full_scan(self, known: Known, meta: dict[str, str], result: Capture) -> None:
        recent_ns = self._covered_until()
        if subvolumes.root_put_in(self._root, recent_ns):
            recent_ns = 0  # the workspace may be a subvolume put in whole: nothing vouches
        walk = self._walker.walk(known, recent_ns)
        if walk is None:
            self._python_scan(known, meta, result, recent_ns)
            return
        result.reported.update(walk.recent)
        stats: dict[str, DiskStat | None] = dict(walk.changed)
        self._gone(known, walk.gone, stats, result.hidden)
        stats.update(result.stats)  # named paths keep their own stat
        result.stats = stats
        result.rules_changed = walk.digest != meta.get("rules")
        result.rules = {"rules": walk.digest, "exclude": self._rules.exclude_key(),
                        "extra": self._rules.extra_key()}
        result.complete = True
        result.trust_stat = True

    def _python_scan(self, known: Known, meta: dict[str, str], result: Capture,
                     recent_ns: int) -> None:
        """The full scan where there is no GNU find to list the tree."""
        devices = subvolumes.possible(self._root)
        found = scan(self._root, self._rules, devices=devices)
        put_in = subvolumes.under(self._put_in("", found, recent_ns)) if devices else ()
        recent = {path for path, st in found.files.items() if path in known and (
            st.st_ctime_ns >= recent_ns or path.startswith(put_in))}
        # Only what the stat cache cannot vouch for goes on to be read; at 50k files this
        # filter is most of the scan's cost after the walk itself.
        stats: dict[str, DiskStat | None] = {
            path: to_disk_stat(st) for path, st in found.files.items()
            if (seen := known.get(path)) is None or path in recent
            or not stat_matches(st, seen[1])}
        result.reported.update(recent)
        self._gone(known, (p for p in known if p not in found.files), stats, result.hidden)
        stats.update(result.stats)  # named paths keep their own stat
        result.stats = stats
        exclude, extra = self._rules.exclude_key(), self._rules.extra_key()
        digest = rules_digest(found.gitignores, exclude, extra)
        result.rules_changed = digest != meta.get("rules")
        result.rules = {"rules": digest, "exclude": exclude, "extra": extra}
        result.complete = True
        result.trust_stat = True


def _partial(snapshot: DirtySnapshot, reason: str) -> str:
    count = len(snapshot.unwatched)
    return f"watcher and a scan of {count:,} unwatched folder(s) ({reason})"
