"""Full scan of the workspace (or one folder of it): every non-ignored file and symlink with its stat."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from stat import S_ISDIR, S_ISLNK, S_ISREG

from .ignore import CheckpointIgnore, Frame


@dataclass
class ScanResult:
    """Files and symlinks found (workspace-relative) with their raw lstat, and the .gitignore files
    met on the way. Raw stats, because converting 50k of them costs more than comparing them."""

    files: dict[str, os.stat_result] = field(default_factory=dict)
    gitignores: list[tuple[str, int, int]] = field(default_factory=list)
    # with devices: every folder walked, start first, each after its parent: (path, st_dev,
    # st_ctime_ns), for subvolumes.put_in
    folders: list[tuple[str, int, int]] = field(default_factory=list)


def scan(root: str, rules: CheckpointIgnore, folder: str = "", *,
         devices: bool = False) -> ScanResult:
    """Walk `folder` ('' = the whole workspace) without following symlinks, pruning ignored folders,
    `.git` folders (of any nested repository too) and the store. Vanishing entries are skipped.
    With devices, each folder walked is lstat'ed too (ScanResult.folders)."""
    result = ScanResult()
    frame = rules.frame_for(folder.rpartition("/")[0])
    if frame is None:
        return result
    if folder and (rules.skipped_dir(folder) or rules.ignored_in(frame, folder, is_dir=True)
                   or not _real_folder(root, folder)):
        return result
    seen = result.folders if devices else None
    for rel_dir, entries in folders(root, rules, folder + "/" if folder else "", frame, seen):
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            rel = rel_dir + entry.name
            if entry.name == ".gitignore":
                result.gitignores.append((rel, st.st_mtime_ns, st.st_size))
            if S_ISREG(st.st_mode) or S_ISLNK(st.st_mode):
                result.files[rel] = st
    return result


def _real_folder(root: str, folder: str) -> bool:
    """Whether `folder` is a folder reached from root through folders only. A watched folder an
    agent replaced by a symlink (to /, say) is not walked: the store would record every path out
    there as its own, for anyone who lists checkpoints to read, holding its lock all the while.
    (Folders below the start are entered only when listed as folders, not symlinks.)"""
    path = root
    for part in folder.split("/"):
        path = os.path.join(path, part)
        try:
            if not S_ISDIR(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


def folders(root: str, rules: CheckpointIgnore, start: str, frame: Frame,
            seen: list[tuple[str, int, int]] | None = None
            ) -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
    """Each folder of the walk from `start` ("" or a folder path ending in "/", whose parent's
    rules are `frame`), as (its path with a trailing "/", or "" for the root; the entries in it
    that are neither folders nor ignored). Folders are entered without following symlinks;
    ignored ones, `.git` and the store are pruned; a folder that cannot be read is skipped.
    With `seen`, each folder's (path without the "/", st_dev, st_ctime_ns) is added to it."""
    stack: list[tuple[str, Frame]] = [(start, frame)]
    if seen is not None:
        try:  # the workspace's own path may be a symlink to it; a folder below never is
            st = os.lstat(os.path.join(root, start)) if start else os.stat(root)
        except OSError:
            return
        seen.append((start.rstrip("/"), st.st_dev, st.st_ctime_ns))
    while stack:
        rel_dir, parent = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        has_gitignore = any(entry.name == ".gitignore" for entry in entries)
        here = rules.child_frame(parent, rel_dir, has_gitignore) if rel_dir else parent
        kept: list[os.DirEntry[str]] = []
        for entry in entries:
            if entry.name == ".git":
                continue
            rel = rel_dir + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not rules.skipped_dir(rel) and not rules.ignored_in(here, rel, is_dir=True):
                        if seen is not None:
                            seen.append(_device(entry, rel))
                        stack.append((rel + "/", here))
                    continue
            except FileNotFoundError:
                continue
            if not rules.ignored_in(here, rel, is_dir=False):
                kept.append(entry)
        yield rel_dir, kept


def _device(entry: os.DirEntry[str], rel: str) -> tuple[str, int, int]:
    """(rel, st_dev, st_ctime_ns) of a folder; a device of -1 (like none) when it cannot be
    lstat'ed (its parent can be read but not searched)."""
    try:
        st = entry.stat(follow_symlinks=False)
    except PermissionError:
        return rel, -1, 0
    return rel, st.st_dev, st.st_ctime_ns

