"""The scope audit: after a command, changes outside the intent's scope are found and undone.

It reads the checkpoint taken before the command through the store's public API: `diff` names
every path that changed since (the store's watcher and scan rules decide what is seen; after a
command nothing confined, `sweep` first has it read again every file whose inode changed, since
a write through a hard link shows in no watcher), and
`restore(..., path=...)` brings the out-of-scope ones back (created files removed). The first
restore's safety checkpoint holds what the command left, so the audit itself can be undone.
An ignore rule file no restore can bring back goes through `set_aside` (saved, then removed).
Git's own control files, which no checkpoint saves, are compared and put back by git_control.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from intentd.daemon.checkpoints.errors import InvalidPath
from intentd.daemon.checkpoints.ignore import is_gitignore
from intentd.daemon.checkpoints.recorder import storable
from intentd.daemon.engine.intents import Intent
from intentd.daemon.policy.globs import fold
from intentd.daemon.policy.persons import persons_path
from intentd.daemon.sandbox import git_control, nested_git, strange_names
from intentd.daemon.sandbox.strange_names import shallowest

log = logging.getLogger(__name__)
# what these (and any .gitignore) hide, checkpoints do not see
RULE_FILES = (".orchestration/ignore", ".clineignore", ".rooignore", ".git/info/exclude")
NOT_KEPT = ("its name is not UTF-8: no checkpoint kept its content, so it could not be put "
            "back")
UNSURE_REPO = ("made, or written in, while the watcher did not see every change, so it may be "
               "older: not moved; review its config and hooks")
OVERLAP_NOTE = ("other calls changed this workspace while it ran, so the change may be theirs: "
                "not undone; review it")


class Store(Protocol):
    state_dir: Path

    @property
    def root(self) -> str: ...

    def create(self, paths: None, *, label: str) -> Any: ...
    def diff(self, checkpoint_id: str) -> list[Any]: ...
    def sweep(self, checkpoint_id: str) -> tuple[str, ...]: ...
    def known_skipped(self, checkpoint_id: str) -> set[str]: ...
    def strange_seen(self) -> tuple[str, ...]: ...
    def git_made(self, checkpoint_id: str,
                 mark: int | None) -> tuple[tuple[str, ...], tuple[str, ...]]: ...
    def restore(self, checkpoint_id: str, *, path: str | None = None) -> Any: ...
    def set_aside(self, paths: list[str], *, label: str) -> Any: ...


@dataclass(frozen=True)
class ScopeAudit:
    """What the audit found outside the scope, and what became of it."""

    mode: str                                # restore | report
    checkpoint_id: str
    intent_id: str | None
    found: tuple[tuple[str, str], ...]       # (path, added | modified | deleted)
    undone: tuple[str, ...] = ()
    left: tuple[tuple[str, str], ...] = ()   # (path, why it could not be undone)
    undo_checkpoint: str | None = None       # restoring it undoes the audit
    note: str = ""                           # why changes were left in place, when they were
    rechecked: bool = False                  # ignore rules were brought back, then looked again
    # The second look's safety checkpoint. It alone holds what the changed rules hid when
    # undo_checkpoint was taken: restoring undo_checkpoint, then from this one each path the
    # second look undid (restore --path), undoes the whole audit.
    recheck_undo_checkpoint: str | None = None
    # Ignore rule files the command wrote that no checkpoint knew before it: removed once
    # set_aside_checkpoint saved them (restoring it brings them back), since what a rule left
    # in place hides, no look sees.
    set_aside: tuple[str, ...] = ()
    set_aside_checkpoint: str | None = None
    git_kept: str | None = None  # where the command's versions of git's files put back are kept
    looked_behind: tuple[str, ...] = ()  # rule files it changed in its scope, looked behind
    moved_out: tuple[str, ...] = ()  # repositories (`.git` entries) it made, moved to git_kept
    strange_out: tuple[str, ...] = ()  # what it made under names not UTF-8, moved to git_kept

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "checkpoint_id": self.checkpoint_id, "intent_id": self.intent_id,
                "out_of_scope": [list(item) for item in self.found], "undone": list(self.undone),
                "left": [list(item) for item in self.left],
                "undo_checkpoint": self.undo_checkpoint, "note": self.note,
                "rechecked": self.rechecked,
                "recheck_undo_checkpoint": self.recheck_undo_checkpoint,
                "set_aside": list(self.set_aside), "set_aside_checkpoint": self.set_aside_checkpoint,
                "git_kept": self.git_kept, "looked_behind": list(self.looked_behind),
                "moved_out": list(self.moved_out), "strange_out": list(self.strange_out),
                "message": self.message()}

    def message(self) -> str:
        """What the agent is told, one path a line."""
        scope = f"intent {self.intent_id}'s owned_scope" if self.intent_id else "any intent's scope"
        lines = [f"[scope audit: this command changed files outside {scope}]"]
        undone, left = set(self.undone), dict(self.left)
        for path, status in self.found:
            shown = _shown(path)
            if path in self.moved_out:
                lines.append(f"  undone: {shown} (a repository the command made: git run there "
                             f"would run its config and hooks; moved out of the workspace, "
                             f"kept in {self.git_kept})")
            elif path in self.strange_out:
                lines.append(f"  undone: {shown} (created under a name that is not UTF-8, which "
                             f"no checkpoint keeps; moved out of the workspace, kept in "
                             f"{self.git_kept})")
            elif path in self.set_aside:
                lines.append(f"  undone: {shown} (an ignore rule file with no earlier state; "
                             f"removed; saved in checkpoint {self.set_aside_checkpoint})")
            elif path in undone and _in_git(path):
                what = "created; removed" if status == "added" else f"{status}; put back"
                lines.append(f"  undone: {shown} ({what} as it was before the command; the "
                             f"command's version is kept in {self.git_kept})")
            elif path in undone:
                what = "created; removed" if status == "added" else f"{status}; brought back"
                lines.append(f"  undone: {shown} ({what} from checkpoint {self.checkpoint_id})")
            elif path in left or (self.mode == "restore" and not self.note):
                why = left.get(path, "the restore left it as it is")
                lines.append(f"  NOT undone: {shown} ({status}; {why})")
            else:
                lines.append(f"  left in place ({self.note or 'scope_audit: report'}): {shown} "
                             f"({status})")
        if self.looked_behind:
            lines.append(f"  the ignore rules it changed in its scope "
                         f"({', '.join(map(_shown, self.looked_behind))}) were looked behind, "
                         "then left as it wrote them")
        rules = [p for p, _ in self.found if is_rule_file(p)]
        if rules and self.rechecked:
            lines.append(f"  the ignore rules changed ({', '.join(map(_shown, rules))}): what they hid was "
                         "checked once they were brought back")
        elif rules:  # what the new rules hide, the checkpoint no longer sees: say so
            lines.append(f"  the ignore rules changed ({', '.join(map(_shown, rules))}): files they hide are "
                         "not watched, so changes to them were not checked")
        return "\n".join(lines)


def _in_git(path: str) -> bool:
    """A `.git` entry, or a path in one: git's own files, of the workspace or one inside it."""
    return path == ".git" or path.startswith(".git/") or path.endswith("/.git") or "/.git/" in path


def _shown(path: str) -> str:
    """A path as the message shows it: quoted when it holds a line break or another control
    character, so a file's name cannot forge a line of the message, or bytes that are not
    UTF-8 (escaped: the message is UTF-8 text)."""
    if not storable(path) or any(ord(c) < 32 or ord(c) == 127 for c in path):
        return json.dumps(path)
    return path


def is_rule_file(path: str) -> bool:
    """An ignore rule file: what it hides, checkpoints do not see."""
    return fold(path) in RULE_FILES or is_gitignore(path)


def in_scope(intent: Intent | None, path: str, fold_case: bool = False) -> bool:
    """The person's own files are compared caseless on every file system, as the protected-paths
    stage does: on a case-insensitive one `.ORCHESTRATION/` is the real folder."""
    if persons_path(path):  # the person's own files, whatever a scope's globs say
        return False
    return intent is not None and intent.owns(path, fold_case)


def audit(store: Store, checkpoint_id: str, intent: Intent | None, mode: str,
          overlapped: bool = False, writable: tuple[str, ...] | None = None,
          fold_case: bool = False,
          git_before: git_control.Before | None = None) -> ScopeAudit | None:
    """Compare what changed since checkpoint_id with the intent's scope; None when all is in it.
    In restore mode each out-of-scope path is brought back to its state at the checkpoint,
    unless other calls changed the workspace meanwhile (overlapped): the changes could be
    theirs, so they are only reported. `writable`: the only folders and files a confined
    command could write; a change elsewhere is someone else's (the person's editor, another
    agent) and is left alone. `git_before`: git's state right after the checkpoint
    (git_control.Before; None: not read)."""
    if mode == "off":
        return None
    if writable is None:  # unconfined, it could write through a link no watcher sees
        store.sweep(checkpoint_id)
    changed, found = _outside(store, checkpoint_id, intent, writable, fold_case)
    # names no checkpoint keeps (not UTF-8), which that look met but no diff shows
    strange, strange_known = _strange(store, checkpoint_id, intent, writable, fold_case)
    found += tuple((p, "added") for p in strange) + tuple((p, "modified") for p in strange_known)
    before = git_before or git_control.Before(None)
    made, unsure = _repos_made(store, checkpoint_id, before, writable)
    nested = _nested_changes(before.nested, writable)
    git_found = (_git_changes(before.own, writable) + nested
                 + tuple((p, "added") for p in made) + tuple((p, "modified") for p in unsure))
    seen = {p for p, _ in found}
    behind = tuple(p for p, _ in changed if is_rule_file(p) and p not in seen)
    if not found and not git_found and not (behind and mode == "restore" and not overlapped):
        return None
    intent_id = intent.id if intent else None
    if mode != "restore":
        return ScopeAudit(mode, checkpoint_id, intent_id, found + git_found)
    # No agent's scope reaches git's own files: what changed there is put back even beside other
    # calls (an agent could otherwise start a second call to make its audit only report).
    controls = tuple(item for item in git_found if item[0] not in made and item[0] not in unsure
                     and item not in nested)
    git_undone, git_left, git_kept = _put_back_git(store, checkpoint_id, before.own, controls)
    if nested:
        kept_in = _kept_in(store, checkpoint_id)
        back, not_back = nested_git.put_back(before.nested, [p for p, _ in nested], kept_in)
        git_undone, git_left, git_kept = git_undone + back, git_left + not_back, str(kept_in)
    moved, not_moved, keep = _move_out(store, checkpoint_id, made)
    git_undone += moved
    git_left += not_moved + [(p, UNSURE_REPO) for p in unsure]
    git_kept = git_kept or keep
    if overlapped:
        return ScopeAudit("report", checkpoint_id, intent_id, found + git_found,
                          tuple(git_undone), tuple(git_left), note=OVERLAP_NOTE,
                          git_kept=git_kept, moved_out=tuple(moved))
    kept_found = tuple(item for item in found if item[0] not in strange + strange_known)
    undone, left, undo = (_restore(store, checkpoint_id, kept_found, changed) if kept_found
                          else ([], [], None))
    strange_out, strange_left, strange_keep = _move_out(store, checkpoint_id, strange,
                                                          strange_names.move_out)
    git_kept = git_kept or strange_keep
    undone = undone + git_undone + strange_out
    left = left + git_left + strange_left + [(p, NOT_KEPT) for p in strange_known]
    found = found + git_found
    aside = _set_aside(store, checkpoint_id, left)
    set_aside = tuple(aside.deleted) if aside is not None else ()
    undone += set_aside
    left = [(p, why) for p, why in left if p not in set_aside]
    result = ScopeAudit(mode, checkpoint_id, intent_id, found, tuple(undone), tuple(left), undo,
                        set_aside=set_aside,
                        set_aside_checkpoint=aside.safety_checkpoint_id if aside else None,
                        git_kept=git_kept, moved_out=tuple(moved), strange_out=tuple(strange_out))
    if not behind and not any(is_rule_file(p) for p in undone):
        return result
    # A rule brought back shows again what it hid (a command may hide docs/, then change it), and
    # a rule the command changed in its scope may hide what is not (a scope with a `!` line):
    # those are taken away for a moment while the audit looks once more and undoes what is new
    # outside the scope, then put back.
    away: list[tuple[str, str]] = []
    try:
        _take_away(store, checkpoint_id, behind, away)
        if writable is None:  # the first sweep went by the rules the command left
            store.sweep(checkpoint_id)
        changed, again = _outside(store, checkpoint_id, intent, writable, fold_case)
        more = tuple((p, s) for p, s in again if p not in seen and p not in behind)
        undone_more, left_more, undo_more = (_restore(store, checkpoint_id, more, changed) if more
                                             else ([], [], None))
    finally:
        for path, holder in away:
            store.restore(holder, path=path)
    if not result.found and not more:
        return None  # nothing outside the scope, behind the rules either
    return replace(result, found=found + more, undone=result.undone + tuple(undone_more),
                   left=result.left + tuple(left_more), rechecked=True,
                   recheck_undo_checkpoint=undo_more, looked_behind=behind)


def _take_away(store: Store, checkpoint_id: str, rules: tuple[str, ...],
               away: list[tuple[str, str]]) -> None:
    """Each rule file as it was at the checkpoint (absent, when it is new since): adds each one
    taken away to `away` with the checkpoint that holds the command's version, to put it back
    (as it goes, so a failure part way still puts back those already taken)."""
    for path in rules:
        try:
            held = store.restore(checkpoint_id, path=path)
        except InvalidPath:  # new since the checkpoint: saved, then removed
            held = store.set_aside([path], label=f"scope audit: a look behind {path}")
            if path not in held.deleted:
                continue
        away.append((path, held.safety_checkpoint_id))


def _outside(store: Store, checkpoint_id: str, intent: Intent | None,
             writable: tuple[str, ...] | None,
             fold_case: bool) -> tuple[list[tuple[str, str]], tuple[tuple[str, str], ...]]:
    """What changed since the checkpoint, and which of it lies outside the scope (and where
    the command could write)."""
    changed = [(d.path, d.status) for d in store.diff(checkpoint_id)]
    found = tuple((p, s) for p, s in changed
                  if not in_scope(intent, p, fold_case) and (writable is None or _under(p, writable)))
    return changed, found


def _put_back_git(store: Store, checkpoint_id: str, before: git_control.Snapshot | None,
                  found: tuple[tuple[str, str], ...]
                  ) -> tuple[list[str], list[tuple[str, str]], str | None]:
    """Git's control files the command changed, put back: (undone, left, where the command's
    versions are kept)."""
    if not found or before is None:
        return [], [], None
    keep = _kept_in(store, checkpoint_id)
    undone, left = git_control.put_back(before, [p for p, _ in found], keep)
    return undone, left, str(keep)


def _kept_in(store: Store, checkpoint_id: str) -> Path:
    """Where the audit of checkpoint_id keeps what it took out of git's folders."""
    return Path(store.state_dir).parent / "audit" / checkpoint_id


def _in_reach(dot_git: str, writable: tuple[str, ...] | None) -> bool:
    """Whether a command could write the repository whose `.git` entry this is: one nothing
    confined could; a confined one, in the folders it was granted."""
    return writable is None or _under(dot_git.rpartition("/")[0], writable)


def _repos_made(store: Store, checkpoint_id: str, before: git_control.Before,
                writable: tuple[str, ...] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The `.git` entries the command made (and, where the watcher did not see all, those that
    may be older: unsure), where it could write. The workspace's own `.git` is git_control's
    when it was the repository's before the command (not when a repository above held it)."""
    own = before.own is not None and _own_root_git(before.own, store.root)

    def kept(paths: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p for p in paths if not (p == ".git" and own) and _in_reach(p, writable))
    made, unsure = store.git_made(checkpoint_id, before.mark)
    return kept(made), kept(unsure)


def _own_root_git(before: git_control.Snapshot, root: str) -> bool:
    """Whether the git folder read before the command was named by the workspace's own `.git`."""
    own = os.path.join(os.path.realpath(root), ".git")
    return before.folder == own or (before.link_file is not None
                                    and os.path.realpath(before.link_file[0]) == own)


def _move_out(store: Store, checkpoint_id: str, made: tuple[str, ...],
              move: Callable[[str, str, Path], str] = nested_git.move_out,
              ) -> tuple[list[str], list[tuple[str, str]], str | None]:
    """What the command made and no checkpoint can take away (repositories; with
    strange_names.move_out, names not UTF-8), moved out of the workspace into the audit's
    folder: (moved, left with why, where)."""
    if not made:
        return [], [], None
    keep = _kept_in(store, checkpoint_id)
    moved, left = [], []
    for path in made:
        try:
            move(store.root, path, keep)
            moved.append(path)
        except OSError as exc:
            left.append((path, f"could not be moved out: {exc.strerror or exc}"))
    return moved, left, str(keep)


def _strange(store: Store, checkpoint_id: str, intent: Intent | None,
             writable: tuple[str, ...] | None,
             fold_case: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Out of the scope (and where the command could write), what the last look met under a
    name that is not UTF-8: (made since the checkpoint; there before it, listed as skipped).
    What it made is taken whole from its first part so named (a folder `tools\\xff/` and all
    in it), unless that part also holds a path in the scope or one there before: then file by
    file."""
    strange = [p for p in store.strange_seen() if writable is None or _under(p, writable)]
    outside = [p for p in strange if not in_scope(intent, p, fold_case)]
    if not outside:
        return (), ()
    known = store.known_skipped(checkpoint_id)
    shared = {shallowest(p) for p in strange if p in known or p not in outside}
    shared |= {shallowest(p) for p in known if not storable(p)}
    made = {p if shallowest(p) in shared else shallowest(p) for p in outside if p not in known}
    return tuple(sorted(made)), tuple(sorted(p for p in outside if p in known))


def _nested_changes(before: dict[str, git_control.Snapshot],
                    writable: tuple[str, ...] | None) -> tuple[tuple[str, str], ...]:
    """The control files of the repositories inside the workspace the command changed; for a
    confined one, only in the folders it could write."""
    return tuple(nested_git.changes_since({rel: snapshot for rel, snapshot in before.items()
                                           if _in_reach(rel, writable)}))


def _git_changes(before: git_control.Snapshot | None,
                 writable: tuple[str, ...] | None) -> tuple[tuple[str, str], ...]:
    """Git's control files the command changed; none when they were not read before it, or
    when it was confined (no confined command may write `.git/`)."""
    if before is None or writable is not None:
        return ()
    return tuple(git_control.changes_since(before))


def _set_aside(store: Store, checkpoint_id: str, left: list[tuple[str, str]]) -> Any:
    """The ignore rule files among what a restore left (no checkpoint knew them before the
    command), removed once saved: a rule left in place would keep hiding whatever the command
    changed under it from the second look. None when there are none."""
    rules = [path for path, _why in left if is_rule_file(path)]
    if not rules:
        return None
    return store.set_aside(rules, label=f"scope audit: ignore rules written since {checkpoint_id}")


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def _restore(store: Store, checkpoint_id: str, found: tuple[tuple[str, str], ...],
             changed: list[tuple[str, str]]) -> tuple[list[str], list[tuple[str, str]], str | None]:
    """Restore the paths found, a whole folder at a time where no kept change (in scope, or not
    the command's) lies in it (a restore costs milliseconds, whatever its size); returns
    (undone, left with why, the first safety checkpoint: restoring it undoes the audit)."""
    paths = [p for p, _ in found]
    kept = sorted({p for p, _ in changed} - set(paths))
    done: set[str] = set()
    left: list[tuple[str, str]] = []
    safety: str | None = None
    queue: list[tuple[str | None, bool]] = [(None, True)] if not kept else [
        (group, True) for group in restore_groups(paths, kept)]
    while queue:
        target, grouped = queue.pop(0)
        try:
            result = store.restore(checkpoint_id, path=target)
        except InvalidPath:
            if grouped and target is not None:  # a path new since the checkpoint: see below
                queue.extend(_one_by_one(store, checkpoint_id, paths, target))
                continue
            left.append((str(target), "the checkpoint holds no state for it"))
            continue
        except Exception as exc:
            log.warning("scope audit: restoring %s from %s failed: %s", target, checkpoint_id, exc)
            if grouped:  # a restore is all or nothing: one path it cannot bring back must not
                # keep the others (a command could plant one to keep every change): one by one
                queue.extend(_one_by_one(store, checkpoint_id, paths, target))
                continue
            left.append((str(target), f"restore failed: {exc}"))
            continue
        safety = safety or result.safety_checkpoint_id
        done.update(result.restored)
        done.update(result.deleted)
        left.extend(result.skipped)
    return [p for p in paths if p in done], left, safety


def _one_by_one(store: Store, checkpoint_id: str, paths: list[str],
                target: str | None) -> list[tuple[str | None, bool]]:
    """The paths found under target (None: all of them), each to be restored on its own. A
    checkpoint first records the files the command created, that no checkpoint knew, as absent
    before it (and saves them), so that each of those can be restored too."""
    store.create(None, label=f"scope audit: new files since {checkpoint_id}")
    return [(p, False) for p in paths
            if target is None or p == target or p.startswith(target + "/")]


def restore_groups(paths: list[str], kept: list[str]) -> list[str]:
    """For each path, its topmost folder holding no kept change (the path itself when none);
    a restore of that folder touches nothing that must stay."""
    busy = {"/".join(k.split("/")[:i]) for k in kept for i in range(1, k.count("/") + 1)}
    groups = set()
    for path in paths:
        parts = path.split("/")
        groups.add(next(("/".join(parts[:i]) for i in range(1, len(parts))
                         if "/".join(parts[:i]) not in busy), path))
    return sorted(g for g in groups if not any(g.startswith(h + "/") for h in groups))
