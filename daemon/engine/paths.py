"""Resolving the paths an agent names: `..` and symlinks resolved, inside the workspace or external."""

from __future__ import annotations

import os
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
    joined = os.path.join(cwd or root, raw)
    try:
        absolute = os.path.realpath(joined)
    except (OSError, ValueError) as exc:
        raise PathRefused(f"cannot resolve {raw!r}: {exc}") from None
    return ResolvedPath(raw, absolute, relative_to(root, absolute))


def relative_to(root: str, absolute: str) -> str | None:
    if absolute == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not absolute.startswith(prefix):
        return None
    return absolute[len(prefix):].replace(os.sep, "/")
