"""Full scan of the workspace (or one folder of it): every non-ignored file and symlink with its stat."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from stat import S_ISLNK, S_ISREG

from .ignore import CheckpointIgnore, Frame


@dataclass
class ScanResult:
    """Files and symlinks found (workspace-relative) with their raw lstat, and the .gitignore files
    met on the way. Raw stats, because converting 50k of them costs more than comparing them."""

    files: dict[str, os.stat_result] = field(default_factory=dict)
    gitignores: list[tuple[str, int, int]] = field(default_factory=list)


def scan(root: str, rules: CheckpointIgnore, folder: str = "") -> ScanResult:
    """Walk `folder` ('' = the whole workspace) without following symlinks, pruning ignored folders,
    `.git` folders (of any nested repository too) and the store. Vanishing entries are skipped."""
    result = ScanResult()
    frame = rules.frame_for(folder.rpartition("/")[0])
    if frame is None:
        return result
    if folder and (rules.skipped_dir(folder) or rules.ignored_in(frame, folder, is_dir=True)):
        return result
    stack: list[tuple[str, Frame]] = [(folder + "/" if folder else "", frame)]
    while stack:
        rel_dir, frame = stack.pop()
        _scan_dir(root, rules, rel_dir, frame, stack, result)
    return result


def _scan_dir(
    root: str,
    rules: CheckpointIgnore,
    rel_dir: str,
    parent: Frame,
    stack: list[tuple[str, Frame]],
    result: ScanResult,
) -> None:
    try:
        with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
            entries = list(it)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    has_gitignore = any(entry.name == ".gitignore" for entry in entries)
    frame = rules.child_frame(parent, rel_dir, has_gitignore) if rel_dir else parent
    for entry in entries:
        rel = rel_dir + entry.name
        if entry.name == ".git":
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if not rules.skipped_dir(rel) and not rules.ignored_in(frame, rel, is_dir=True):
                    stack.append((rel + "/", frame))
                continue
            if rules.ignored_in(frame, rel, is_dir=False):
                continue
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if entry.name == ".gitignore":
            result.gitignores.append((rel, st.st_mtime_ns, st.st_size))
        if S_ISREG(st.st_mode) or S_ISLNK(st.st_mode):
            result.files[rel] = st
