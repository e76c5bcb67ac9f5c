"""CheckpointStore: the checkpoint API the engine calls (create, list, get, diff, restore, close)."""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from dulwich.objects import Blob

from intentd.daemon.utils.statedir import checkpoints_dir, ensure_private, make_tree_private

from . import heap, inbox, inotify, subvolumes
from .capture import Capture, Capturer
from .diffing import file_diff, unknown_diff
from .dirty import DirtyTracker
from .errors import (
    CheckpointError,
    InvalidPath,
    UnknownCheckpoint,
    WorkspaceMissing,
)
from .ignore import CheckpointIgnore, PolicyRules, policy_key
from .inotify_tracker import InotifyTracker
from .known import Known
from .lock import StoreLock
from .manifest import Draft, Manifest, Row
from .model import Checkpoint, CheckpointKind, Coverage, FileDiff, RestoreResult
from .objects import BlobStore
from .paths import normalize, under
from .recorder import Changes, Recorder, storable
from .restore import Restorer, plan
from .state import ABSENT, Entry
from .sweep import changed_since, git_entries
from .upkeep import Upkeep
from .warmup import Progress, prehash

# Aliases because the method `list` shadows the builtin inside the class body.
Checkpoints = list[Checkpoint]
Tracker = InotifyTracker | DirtyTracker
# nested repositories whose control files are read before a command and compared after it
MAX_NESTED_REPOS = 64
# ctime is compared with a checkpoint's clock this much earlier: a file system may keep whole
# seconds (ext4 with small inodes), and a second too early costs only a second look
TIMESTAMP_STEP_NS = 1_000_000_000
FileDiffs = list[FileDiff]
_ID = re.compile(r"(?:cp-)?0*(\d{1,18})")
NO_STATE = "no state at this checkpoint; left in place"
BASELINE = "baseline: the workspace as intentd found it"
log = logging.getLogger(__name__)


def make_id(seq: int) -> str:
    return f"cp-{seq:06d}"


def parse_id(text: str) -> int:
    """cp-000042, cp-42 and 42 all name checkpoint 42."""
    match = _ID.fullmatch(text.strip())
    if match is None:
        raise UnknownCheckpoint(f"{text!r} is not a checkpoint id (they look like cp-000042)")
    return int(match.group(1))


def _fs_clock_ns() -> int:
    """The clock file timestamps come from (the coarse one on Linux), for ctime comparisons."""
    clock = getattr(time, "CLOCK_REALTIME_COARSE", None)
    return time.clock_gettime_ns(clock) if clock is not None else time.time_ns()


class CheckpointStore:
    """Checkpoints of one workspace, kept outside it (see the package docstring).

    ignore_rules returns the workspace's policy rules as they are now (they may be edited while
    the store is open): what they hide is never saved, and a change of them makes the next
    command checkpoint scan the workspace, as a .gitignore change does.
    """

    def __init__(
        self,
        workspace: Path,
        state_dir: Path | None = None,
        *,
        max_file_bytes: int = 5 * 2**20,
        max_store_bytes: int = 2 * 2**30,
        ignore_rules: Callable[[], PolicyRules] | None = None,
        watch: bool = True,
    ) -> None:
        heap.keep_trimmed()  # a long-running daemon: what a full scan frees must go back
        root = os.path.abspath(workspace)
        if not os.path.isdir(root):
            raise WorkspaceMissing(f"workspace {root} does not exist (moved or deleted?)")
        self._root = root
        self._identity = self._stat_root()
        self.state_dir = Path(state_dir) if state_dir is not None else checkpoints_dir(Path(root))
        self._open_state_dir()
        skip = self._store_inside_workspace()
        self._rules = _ignore_rules(root, ignore_rules, skip)
        self._lock = StoreLock(self.state_dir / "lock")
        with self._lock.hold():
            self._manifest = Manifest(self.state_dir / "manifest.sqlite3", root)
            self._blobs = BlobStore(self.state_dir / "git", self._from_inbox)
        self._recorder = Recorder(root, self._blobs, max_file_bytes)
        self._tracker: Tracker | None = None
        self._unwatched_why = "" if watch else "watching is off"
        if watch:
            tracker = _make_tracker(root, str(self.state_dir / "watch"), self._rules.skipped_dir)
            self._tracker = tracker if tracker.start() else None
            self._unwatched_why = "" if self._tracker else "the platform refused a file watcher"
        self._capturer = Capturer(root, self._rules, self._recorder, self._tracker,
                                  self._covered_until)
        self._known = Known()  # every path's latest entry, packed (see known.py)
        self._generation = -1
        self._drained_seq = -1
        self._upkeep = Upkeep(self._manifest, self._blobs, max_store_bytes)
        self._upkeep_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._warming = threading.Lock()
        self._strange: tuple[str, ...] = ()  # see strange_seen
        self.warm_up_progress: tuple[int, int] | None = None  # (files read, in all) while warming

    def _open_state_dir(self) -> None:
        """The store holds copies of workspace files: its folder and files are the owner's only."""
        try:
            was_open = self.state_dir.is_dir() and self.state_dir.stat().st_mode & 0o077
            ensure_private(self.state_dir)
            if was_open:  # made before stores were kept private
                make_tree_private(self.state_dir)
            fd = os.open(self.state_dir / "WORKSPACE", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self._root + "\n")
        except OSError as exc:
            raise CheckpointError(f"cannot use checkpoint store {self.state_dir}: {exc.strerror}") from exc

    def _store_inside_workspace(self) -> list[str]:
        state = os.path.abspath(self.state_dir)
        if state.startswith(self._root + os.sep):
            return [os.path.relpath(state, self._root).replace(os.sep, "/")]
        return []

    def disk_usage(self) -> int:
        """Bytes the store takes on disk now."""
        self.wait_for_upkeep()
        with self._lock.hold(exclusive=False):
            self._manifest.flush()
            return self._upkeep.measure()

    @property
    def root(self) -> str:
        """The workspace's folder."""
        return self._root

    @property
    def watching(self) -> bool:
        """True while the file watcher sees every folder (command checkpoints then cost what
        changed); coverage() says what it misses otherwise."""
        return self.coverage().mode == "watched"

    def coverage(self) -> Coverage:
        """How much of the workspace the watcher sees; the rest is scanned at command checkpoints."""
        if self._tracker is None:
            return Coverage(False, 0, (), self._unwatched_why)
        return self._tracker.coverage()

    def warm_up(self, progress: Progress | None = None) -> Checkpoint | None:
        """Take the workspace's first complete checkpoint (a baseline) unless it has one, reading
        and hashing every file first without holding the store: tool calls meanwhile wait only
        for what they need, and the first command checkpoint is spared a full read. The baseline
        comes back brief (no files: it holds every file; get() lists them)."""
        with self._warming:
            if self._stop.is_set() or self._warm():
                return None

            def report(done: int, total: int) -> None:
                self.warm_up_progress = (done, total)
                if progress is not None:
                    progress(done, total)

            try:
                read_from = _fs_clock_ns() - TIMESTAMP_STEP_NS
                hints = prehash(self._root, self._rules, self._recorder, self._put, self._stop, report)
                if self._stop.is_set():
                    return None
                self.wait_for_upkeep()
                with self._lock.hold():
                    if self._warm():  # a command checkpoint got there first
                        return None
                    self._recorder.hints, self._recorder.hints_since_ns = hints, read_from
                    try:
                        seq = parse_id(self._create(None, BASELINE, kind="baseline")[0].id)
                        self._manifest.keep_last(seq)  # the workspace as intentd found it
                    finally:
                        self._recorder.hints = hints = Known()
                    # The baseline's entries sit in the write-ahead log: fold them in now, or
                    # the next checkpoint's commit does it (150 ms at 500k files, in a tool call).
                    self._manifest.flush()
                    self._compact_known()
                    (row,) = self._manifest.rows("WHERE seq = ?", (seq,), brief=True)
                    return self._checkpoint(row)  # brief: get() lists its files (all of them)
            finally:
                self.warm_up_progress = None

    def _compact_known(self) -> None:
        """After a full scan (its garbage freed): the known state made again of new objects,
        so that it lies together, and the rest handed back; the daemon would keep the peak."""
        data = self._known.packed()
        self._known = Known()  # the only reference: its objects go now
        self._known = Known.unpacked(data)
        del data
        heap.give_back()

    def _warm(self) -> bool:
        with self._lock.hold(exclusive=False):
            return bool(self._manifest.meta().get("run_start"))

    def _from_inbox(self, sha: str) -> bytes | None:
        """A blob still in the inbox, checked against its sha (the store's lock is held)."""
        packed = self._manifest.inbox_blob(sha)
        return None if packed is None else inbox.content(sha, packed, str(self.state_dir))

    def _put(self, blobs: list[Blob]) -> None:
        with self._lock.hold():  # git and dulwich are not to be shared across threads unguarded
            self._blobs.put(blobs)

    def close(self) -> None:
        """Stop the watcher (and a warm-up) and release the store; again, nothing."""
        if self._stop.is_set():
            return
        self._stop.set()
        with self._warming:
            pass
        self.wait_for_upkeep()
        if self._tracker is not None:
            self._tracker.stop()
            self._tracker = None
            self._capturer = Capturer(self._root, self._rules, self._recorder, None,
                                      self._covered_until)
        try:  # a store at rest is plain git: what git tools and older versions can read
            with self._lock.hold_if_free() as held:
                if held:  # else a call or another process has it: the inbox is safe where it is
                    self._upkeep.move_inbox()
        except (OSError, CheckpointError) as exc:
            log.warning("checkpoints: could not move the inbox of %s into git: %s", self.state_dir, exc)
        self._manifest.close()
        self._blobs.close()
        self._lock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- reading -------------------------------------------------------------------------

    def list(self) -> Checkpoints:
        """Every checkpoint still stored, oldest first."""
        self.wait_for_upkeep()
        with self._lock.hold(exclusive=False):
            # the baseline is the ground later restores stand on, not a point a tool call made
            return [self._checkpoint(row) for row in self._manifest.rows("WHERE kind != 'baseline'")]

    def get(self, checkpoint_id: str) -> Checkpoint:
        self.wait_for_upkeep()
        with self._lock.hold(exclusive=False):
            return self._checkpoint(self._row(checkpoint_id))

    def diff(self, checkpoint_id: str, *, against: Literal["current", "next"] = "current",
             path: str | None = None) -> FileDiffs:
        """Per-file unified diffs from the checkpoint to the workspace now, or to the next
        checkpoint (the workspace now when there is none yet)."""
        if against not in ("current", "next"):
            raise CheckpointError(f"against must be 'current' or 'next', not {against!r}")
        prefix = normalize(path) if path is not None else None
        self.wait_for_upkeep()
        with self._lock.hold():
            row = self._row(checkpoint_id, brief=True)
            upto = self._manifest.next_seq(row.seq) if against == "next" else None
            if upto is not None:
                paths = self._manifest.changed_after(row.seq, upto)
                old, new = self._states_then(row.seq, paths), self._manifest.states_at(upto, paths)
                fresh: dict[str, bytes] = {}
            else:
                old, new, fresh = self._against_now(row)
            return self._diffs(row, old, new, fresh, prefix)

    def sweep(self, checkpoint_id: str) -> tuple[str, ...]:
        """The files whose inode changed since the checkpoint was taken, whether or not a watcher
        saw it (sweep.py): a write through a hard link made elsewhere is seen only so. Each is
        read again by the next look, whatever its stat cache says (its mtime may be set back)."""
        self.wait_for_upkeep()
        with self._lock.hold():
            row = self._row(checkpoint_id, brief=True)
            self._check_workspace()
            self._sync_known(int(self._manifest.meta().get("generation", "0")))
            found = changed_since(self._root, self._rules, row.clock_ns - TIMESTAMP_STEP_NS,
                                  self._known.under)
            for path in found:
                seen = self._known.get(path)
                if seen is not None and seen[1].mtime_ns >= 0:
                    self._known.refresh(path, seen[1].size, -1, seen[1].ino)  # vouches for nothing now
            self._capturer.recorded(found)
            if self._tracker is not None:
                self._tracker.add(found)
            return tuple(found)

    def strange_seen(self) -> tuple[str, ...]:
        """The names that are not UTF-8 which the last diff against the workspace now met: the
        ones the watcher reported (or a sweep found) since the last checkpoint. No checkpoint
        keeps them, so no diff shows them: the scope audit asks for them here."""
        return self._strange

    def known_skipped(self, checkpoint_id: str) -> set[str]:
        """Every path a checkpoint up to this one listed as skipped (not kept: a name that is
        not UTF-8, a file over the size cap): what was there before, though none holds it."""
        self.wait_for_upkeep()
        with self._lock.hold(exclusive=False):
            return self._manifest.skipped_until(self._row(checkpoint_id, brief=True).seq)

    def git_mark(self) -> int | None:
        """Where the watcher is now: taken right after a command's checkpoint, git_made() then
        names the `.git` entries made since. None without a watcher."""
        return self._tracker.drains if self._tracker is not None else None

    def git_repositories(self) -> tuple[str, ...]:
        """The `.git` entries in the workspace other than its own (nested repositories) that
        the watcher knows of, at most MAX_NESTED_REPOS; none without a watcher."""
        if self._tracker is None:
            return ()
        nested = [rel for rel in self._tracker.git_known() if rel != ".git"]
        return tuple(nested[:MAX_NESTED_REPOS])

    def git_made(self, checkpoint_id: str,
                 mark: int | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The `.git` entries (folders, files or links) made or moved into the workspace since
        `mark` (git_mark() just after the checkpoint). Checkpoints never look inside one, yet
        each makes its folder a repository whose config and hooks git runs there. Returns (made,
        unsure). Where the watcher missed events, a walk finds each it had not seen before:
        made, in folders it watches; in those it cannot (or with no watcher), one whose inode
        changed since the checkpoint is unsure, since git writing in an older one moves that."""
        with self._lock.hold(exclusive=False):
            row = self._row(checkpoint_id, brief=True)
        made: set[str] = set()
        old: set[str] = set()
        lost = True  # without a watcher's word, nothing was seen
        unwatched = {"": False}  # folders never watched: whether each was made since
        if self._tracker is not None and mark is not None:
            made, old, lost, unwatched = self._tracker.git_seen(mark)
        unsure = []
        look = ("",) if lost else tuple(unwatched)
        for rel in sorted(git_entries(self._root, look, self._rules.skipped_folders) - made - old):
            blind = [new for folder, new in unwatched.items() if not folder or under(rel, folder)]
            if not blind or any(blind):
                made.add(rel)  # seen being made, or where every older one was seen before
                continue
            try:
                changed = os.lstat(os.path.join(self._root, rel)).st_ctime_ns
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                changed = row.clock_ns  # cannot be told: named
            if changed >= row.clock_ns - TIMESTAMP_STEP_NS:
                unsure.append(rel)
        return tuple(sorted(made)), tuple(unsure)

    def _against_now(self, row: Row) -> tuple[dict[str, Entry], dict[str, Entry], dict[str, bytes]]:
        """The checkpoint's states and the workspace's, for every path that may differ."""
        self._check_workspace()
        _capture, changes, run_start, _meta = self._observe(None, drain=False, save=False)
        self._strange = tuple(p for p, _why in changes.skipped if not storable(p))
        paths = set(self._manifest.changed_after(row.seq)) | set(changes.entries)
        old = self._states_then(row.seq, paths)
        if run_start is not None and run_start <= row.seq:
            for path in changes.created:
                old.setdefault(path, ABSENT)
        new = {p: changes.entries.get(p) or self._known[p][1]
               for p in paths if p in changes.entries or p in self._known}
        return old, new, changes.data

    def _diffs(self, row: Row, old: dict[str, Entry], new: dict[str, Entry], fresh: dict[str, bytes],
               prefix: str | None) -> FileDiffs:
        def load(path: str, entry: Entry) -> bytes:
            data = fresh.get(path)
            return data if data is not None and new.get(path) is entry else self._blobs.get(entry.sha)

        found: FileDiffs = []
        for path in sorted(old.keys() | new.keys()):
            if prefix is not None and not under(path, prefix):
                continue
            if path not in old:  # first recorded after the checkpoint (after a gap in watching)
                unknown = new[path].present and self._changed_since(row, path)
                change = unknown_diff(path, NO_STATE) if unknown else None
            else:
                change = file_diff(path, old[path], new.get(path, ABSENT), load)
            if change is not None:
                found.append(change)
        return found

    # -- writing -------------------------------------------------------------------------

    def create(self, paths: Sequence[str] | None, *, label: str) -> Checkpoint:
        """Save the state a tool call may change: the named paths, or (None, before a shell
        command) whatever changed since the previous checkpoint."""
        if isinstance(paths, str):
            raise InvalidPath("paths must be a list of paths, not one string")
        self.wait_for_upkeep()
        with self._lock.hold():
            return self._create(paths, label)[0]

    def latest_or_create(self, *, label: str) -> tuple[Checkpoint, bool]:
        """Before a command that should change nothing: the newest checkpoint when nothing has
        changed since it (the state the command starts from is then exactly its state, so a
        diff against it shows only what the command did), else a new command checkpoint, as
        create(None) takes. True when the checkpoint is new: an `ls` after an `ls` adds none."""
        self.wait_for_upkeep()
        with self._lock.hold():
            return self._create(None, label, reuse=True)

    def _create(self, paths: Sequence[str] | None, label: str, *, upkeep: bool = True,
                holds: Iterable[str] = (), kind: str = "",
                reuse: bool = False) -> tuple[Checkpoint, bool]:
        """The new checkpoint, and True; with `reuse`, the latest one and False when nothing
        changed since it."""
        created_ns, clock_ns = time.time_ns(), _fs_clock_ns()
        self._check_workspace()
        try:
            capture, changes, run_start, meta = self._observe(paths, drain=True, save=True)
            latest = (self._manifest.last() if reuse and run_start is not None
                      and _unchanged(capture, changes) else None)
            if latest is not None:
                # the watcher was drained here, at the latest checkpoint's state: it covers since
                if self._tracker is not None:
                    self._drained_seq = latest.seq
                return self._checkpoint(latest), False
            kind = kind or ("files" if paths is not None else "command")
            draft = Draft(label, kind, capture.complete,
                          created_ns, clock_ns,
                          sorted({p for p, e in changes.entries.items() if e.kind != "skipped"}
                                 | set(holds)),
                          capture.skipped + changes.skipped, changes.entries,
                          changes.created if run_start is not None else [],
                          changes.stat_refresh, changes.bytes_added, capture.rules,
                          changes.first_seen, capture.coverage, changes.inbox)
            seq = self._manifest.commit(draft, run_start, meta)
        except BaseException:
            if self._tracker is not None:
                self._tracker.mark_lost()  # what it saw since the last checkpoint was not recorded
            raise
        if self._tracker is not None:
            self._drained_seq = seq
        self._remember(seq, changes)
        if upkeep:
            self._start_upkeep()
        return self._checkpoint(Row(seq, created_ns, clock_ns, label, draft.kind, draft.complete,
                                    tuple(draft.files), tuple(draft.skipped), draft.coverage)), True

    def _observe(self, paths: Sequence[str] | None, *, drain: bool,
                 save: bool) -> tuple[Capture, Changes, int | None, dict[str, str]]:
        """Capture and record; returns the run start that new files backfill to (None: no
        backfill), and the manifest's meta values as read."""
        meta, prev = self._manifest.head()
        self._sync_known(int(meta.get("generation", "0")))
        capture = self._capturer.capture(
            paths, prev, self._known, meta,
            own_drain=prev is not None and prev.seq == self._drained_seq, drain=drain)
        continues = (prev is not None and prev.complete and capture.complete
                     and not capture.rules_changed and bool(meta.get("run_start")))
        changes = self._recorder.record(
            capture.stats, self._known, explicit=capture.explicit, reported=capture.reported,
            trust_stat=capture.trust_stat,
            created_after_ns=prev.clock_ns if continues and prev is not None else None, save=save)
        changes.stat_refresh += _forget_stat(capture.hidden, self._known)
        return capture, changes, int(meta["run_start"]) if continues else None, meta

    def _start_upkeep(self) -> None:
        """Storage upkeep, when due, runs on its own thread: alongside the tool the checkpoint was
        taken for, not before it. It holds the store's lock; the store's next call waits for it."""
        running = self._upkeep_thread
        if (running is None or not running.is_alive()) and self._upkeep.due():
            thread = threading.Thread(target=self._run_upkeep, daemon=True,
                                      name=f"checkpoint upkeep {os.path.basename(self._root)}")
            thread.start()  # before it is shared: another thread may join it at once
            self._upkeep_thread = thread

    def _run_upkeep(self) -> None:
        try:
            with self._lock.hold():
                if self._upkeep.after_checkpoint():
                    self._generation = -1  # entries moved between checkpoints: reload the known state
        except Exception:  # a thread's failure must reach the log, not vanish
            log.exception("checkpoints: storage upkeep in %s failed", self.state_dir)

    def keep_last(self, checkpoint_id: str) -> None:
        """Have pruning drop this checkpoint only after every other it can: the state before a
        session's first call, which an agent filling the store must not be able to push out."""
        with self._lock.hold():
            self._manifest.keep_last(self._row(checkpoint_id, brief=True).seq)

    def wait_for_upkeep(self) -> None:
        """Return once the upkeep started by the last checkpoint (if any) is done."""
        thread = self._upkeep_thread  # kept once done: joining it again returns at once
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _remember(self, seq: int, changes: Changes) -> None:
        known = self._known
        for path, entry in changes.entries.items():
            known.set(path, seq, entry)
        for path, _seq, size, mtime, ino in changes.stat_refresh:
            known.refresh(path, size, mtime, ino)
        self._generation = self._manifest.committed_generation
        self._capturer.recorded(changes.entries)
        self._capturer.recorded(path for path, *_ in changes.stat_refresh)

    def restore(self, checkpoint_id: str, *, path: str | None = None) -> RestoreResult:
        """Bring the workspace (or one file or folder of it) back to the checkpoint's state,
        after taking a safety checkpoint that undoes it."""
        prefix = normalize(path) if path is not None else None
        self.wait_for_upkeep()
        with self._lock.hold():
            row = self._row(checkpoint_id, brief=True)
            name = make_id(row.seq)
            if prefix is not None and not self._manifest.holds(row.seq, prefix):
                raise InvalidPath(f"checkpoint {name} holds no state for {prefix}")
            # no pruning until the restore is done: it could fold away the very checkpoint restored
            # The safety names the files it keeps for the undo, changed here or at earlier points.
            holds = [p for p in self._manifest.changed_after(row.seq)
                     if prefix is None or under(p, prefix)]
            safety = self._create(None, f"safety: before restoring {name}"
                                        + (f" ({prefix})" if prefix else ""), upkeep=False,
                                  holds=holds)[0]
            paths = [p for p in self._manifest.changed_after(row.seq)
                     if prefix is None or under(p, prefix)]
            targets = self._states_then(row.seq, paths)
            current = {p: self._known[p][1] for p in paths if p in self._known}
            ops, skipped = plan(targets, current)
            unknown = [(p, NO_STATE) for p in paths if p not in targets and p in current
                       and current[p].present and self._changed_since(row, p)]
            try:
                restored, deleted, refused = Restorer(self._root, self._blobs, self._recorder).apply(ops)
            finally:
                self._start_upkeep()
        left = sorted(skipped + refused + unknown)
        return RestoreResult(name, safety.id, tuple(restored), tuple(deleted), tuple(left))

    def set_aside(self, paths: Sequence[str], *, label: str) -> RestoreResult:
        """Remove these files, once a new checkpoint has saved them: for files whose state
        before a command no checkpoint knows, so no restore can put it back (an ignore rule
        file the command wrote). Restoring the new checkpoint brings them back. A file the
        checkpoint could not save (ignored, too big, not a regular file) stays."""
        if isinstance(paths, str):
            raise InvalidPath("paths must be a list of paths, not one string")
        self.wait_for_upkeep()
        with self._lock.hold():
            wanted = {normalize(p) for p in paths}
            saved, _new = self._create(sorted(wanted), label, upkeep=False)
            # only the named files: the checkpoint also records what else changed since the last
            current = {p: self._known[p][1] for p in saved.files if p in wanted and p in self._known}
            ops, skipped = plan({p: ABSENT for p, e in current.items() if e.kind == "file"},
                                current)
            try:
                _restored, deleted, refused = Restorer(self._root, self._blobs,
                                                       self._recorder).apply(ops)
            finally:
                self._start_upkeep()
        left = [(p, why) for p, why in saved.skipped if p in wanted] + skipped + refused
        left += [(p, "not a regular file") for p, e in current.items()
                 if e.present and e.kind != "file"]
        return RestoreResult(saved.id, saved.id, (), tuple(deleted), tuple(sorted(left)))

    # -- helpers -------------------------------------------------------------------------

    def _states_then(self, seq: int, paths: Iterable[str]) -> dict[str, Entry]:
        """Each path's state at checkpoint seq: its entry then, or absent when the first later
        checkpoint to record it found it absent (a file a tool or command made after seq).
        Paths first recorded present later are left out: their state then is unknown."""
        wanted = list(paths)
        states = self._manifest.states_at(seq, wanted)
        later = self._manifest.first_after(seq, [p for p in wanted if p not in states])
        states.update((p, ABSENT) for p, entry in later.items() if not entry.present)
        return states

    def _stat_root(self) -> tuple[int, int, int | None]:
        """What tells this workspace from a folder put in its place: its device and inode, and
        the subvolume it is in (a subvolume put back whole may reuse the device number)."""
        try:
            st = os.stat(self._root)
        except OSError:
            raise WorkspaceMissing(f"workspace {self._root} no longer exists (moved or deleted?)") from None
        return (st.st_dev, st.st_ino, subvolumes.subvolume_id(self._root))

    def _check_workspace(self) -> None:
        if self._stat_root() != self._identity:
            raise WorkspaceMissing(f"workspace {self._root} was replaced by another folder since the "
                                   "store opened (moved or deleted?); reopen the store")

    def _covered_until(self) -> int:
        """Since when a scan must read a file whatever its stat cache says (Capturer): the clock
        of the last checkpoint that covered every file, a timestamp tick earlier; 0 (every
        recorded file) when none did, since a file tool's checkpoint covers only its files."""
        clock = self._manifest.last_whole_clock()
        return 0 if clock is None else max(0, clock - TIMESTAMP_STEP_NS)

    def _changed_since(self, row: Row, path: str) -> bool:
        """False when the file has not changed since before checkpoint row (its ctime is older
        than the clock then): its state at row, never recorded, is its state now. File times lag
        the clock by up to a tick, so a change in the first milliseconds of the checkpoint may
        pass for older; no tool runs before the checkpoint is done."""
        st = self._recorder.stat(path)
        return st is None or st.ctime_ns >= row.clock_ns

    def _sync_known(self, generation: int) -> None:
        """Reload the known state when another process (or a prune) changed the manifest
        (generation: the manifest's now, read with the rest of its meta values)."""
        if generation != self._generation:
            self._known = Known()  # the old one's memory goes before the new one is built
            self._capturer.reset()
            self._known = self._manifest.known()
            self._generation = generation
            heap.give_back()

    def _row(self, text: str, *, brief: bool = False) -> Row:
        """brief: without its file list, for diff and restore, which need only its seq and
        times (a baseline's list names every file: milliseconds to load at 50k files, on every
        audit of a read the baseline serves)."""
        seq = parse_id(text)
        found = self._manifest.rows("WHERE seq = ?", (seq,), brief=True) if brief else []
        return found[0] if found else self._manifest.row(seq, text)

    @staticmethod
    def _checkpoint(row: Row) -> Checkpoint:
        kind: CheckpointKind = row.kind if row.kind in ("files", "baseline") else "command"  # type: ignore[assignment]
        return Checkpoint(make_id(row.seq), row.created_ns / 1e9, row.label, row.files,
                          row.skipped, kind, row.coverage)


def _make_tracker(root: str, barrier_dir: str, skipped_dir: Callable[[str], bool]) -> Tracker:
    """inotify on Linux (every failure to watch is known); watchdog's observer elsewhere."""
    if inotify.available():
        return InotifyTracker(root, skipped_dir)
    return DirtyTracker(root, barrier_dir, skipped_dir)


def _ignore_rules(root: str, policy: Callable[[], PolicyRules] | None, skip: list[str]) -> CheckpointIgnore:
    """The store's ignore rules: git's, plus the workspace's policy as it is at each call."""
    if policy is None:
        return CheckpointIgnore(root, None, skip)
    return CheckpointIgnore(root, lambda rel: policy().ignores(rel), skip, lambda: policy_key(policy()))


def _forget_stat(paths: Iterable[str], known: Known) -> list[tuple[str, int, int, int, int]]:
    """Stat refreshes that drop the stat cache (mtime -1) of these known files and links, so
    that they are read when next seen (Capture.hidden)."""
    found = ((p, known.get(p)) for p in paths)
    return [(p, seen[0], seen[1].size, -1, seen[1].ino) for p, seen in found
            if seen is not None and seen[1].kind in ("file", "link") and seen[1].mtime_ns >= 0]


def _unchanged(capture: Capture, changes: Changes) -> bool:
    """Nothing to record: no file changed, appeared or went, and no stat needs refreshing."""
    return not (changes.entries or changes.created or changes.first_seen or changes.skipped
                or changes.stat_refresh or capture.skipped or capture.rules_changed)
