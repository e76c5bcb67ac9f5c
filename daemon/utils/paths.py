"""Resolving the paths an agent names: `..` and symlinks resolved, inside the workspace or external."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from dataclasses import dataclass

MAX_PATH_CHARS = 4096


class PathRefused(ValueError):
    """The path cannot be used at all (empty, NUL byte, too long, unresolvable)."""


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    raw: str            # what the agent sent
    absolute: str       # fully resolved (symlinks of the existing prefix followed)
    relative: str | None  # posix path relative to the workspace root, None when external

    @property
    def inside(self) -> bool:
        return self.relative is not None

    @property
    def shown(self) -> str:
        return self.relative if self.relative is not None else self.absolute


def resolve(root: str, raw: str, cwd: str | None = None) -> ResolvedPath:
    """Resolve `raw` against `cwd` (default: the workspace root `root`, itself already resolved)."""
    if not isinstance(raw, str) or not raw.strip():
        raise PathRefused("empty path")
    if "\x00" in raw:
        raise PathRefused(f"path contains a NUL byte: {raw!r}")
    if len(raw) > MAX_PATH_CHARS:
        raise PathRefused(f"path is longer than {MAX_PATH_CHARS} characters")
    base = cwd or root
    try:
        if os.path.isabs(raw) or not base.startswith(root):
            absolute = os.path.realpath(os.path.join(base, raw))
        else:
            absolute = _resolve_below(base, raw)
        # The kernel takes `..` after a symlink from the link's target; a client that runs the
        # tool itself may drop `..` as text first (Node's path.resolve does), and so write
        # another file than the one checked: `src/d/../../.orchestration/x` with d -> a/b.
        as_text = (os.path.realpath(os.path.normpath(os.path.join(base, raw)))
                   if ".." in raw.split("/") else absolute)
    except (OSError, ValueError) as exc:
        raise PathRefused(f"cannot resolve {raw!r}: {exc}") from None
    if as_text != absolute:
        raise PathRefused(f"{raw!r} has '..' after a symlink, which programs read two ways (it is "
                          "not clear which file it names): give the path without '..'")
    return ResolvedPath(raw, absolute, relative_to(root, absolute))


def _resolve_below(base: str, raw: str) -> str:
    """realpath(base/raw) for an already resolved `base`: only the components of `raw` are
    looked at (lstat), which halves the system calls on deep workspaces. Any symlink met is
    handed to os.path.realpath with the rest of the path, so semantics stay realpath's."""
    current = base
    parts = raw.split("/")
    for index, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = current + "/" + part if current != "/" else "/" + part
        if os.path.islink(candidate):
            return os.path.realpath("/".join([candidate, *parts[index + 1:]]))
        current = candidate
    return current


def relative_to(root: str, absolute: str) -> str | None:
    if absolute == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not absolute.startswith(prefix):
        return None
    return absolute[len(prefix):].replace(os.sep, "/")


def folds_case(folder: str) -> bool:
    """True when `folder` treats names that differ only in case as the same name.

    Probed on the real folder: an entry's name is looked up with its case swapped. Found, and
    not itself listed, means the file system folds case; not found means it does not. (Inode
    numbers are not compared: FUSE file systems such as exFAT give each spelling its own.) A
    folder with no such entry gets a short-lived probe file. If neither can be done, the
    platform's usual file system decides (macOS and Windows fold case)."""
    try:
        names = set(os.listdir(folder))
        for name in sorted(names):
            if name.isascii() and any(c.isalpha() for c in name):
                swapped = name.swapcase()
                return swapped not in names and os.path.lexists(os.path.join(folder, swapped))
        fd, probe = tempfile.mkstemp(prefix=".intentd-case-probe-", dir=folder)
    except OSError:
        return sys.platform in ("darwin", "win32")
    try:
        return os.path.lexists(os.path.join(folder, os.path.basename(probe).swapcase()))
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(probe)
