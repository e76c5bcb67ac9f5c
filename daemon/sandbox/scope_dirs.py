"""The folders an intent's owned_scope covers, as the kernel can grant them: plain path prefixes.

Landlock grants a folder and everything beneath it; it knows nothing of globs or `!` exclusions.
So each pattern is widened to the longest literal folder it starts with (`src/**/*.py` → `src`),
and what is wider than the scope is left to the scope audit after the command.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from intentd.daemon.policy.persons import PERSONS_FILES, PERSONS_FOLDER

ROOT = ""  # the whole workspace (its children except the protected ones)
GLOB_CHARS = frozenset("*?[\\")
# never writable, wherever a granted folder holds them: git's store, and the person's files
PROTECTED = (".git", PERSONS_FOLDER, *PERSONS_FILES)


def covered_prefixes(owned_scope: Iterable[str], root: str) -> list[str]:
    """Workspace-relative folders (posix, "" for the root) that together cover owned_scope."""
    prefixes = {_prefix(pattern.strip(), root) for pattern in owned_scope}
    prefixes.discard(None)
    found = sorted(p for p in prefixes if p is not None)
    if ROOT in found:
        return [ROOT]
    # a folder beneath another granted one adds nothing
    return [p for p in found if not any(p.startswith(q + "/") for q in found if q != p)]


def _prefix(pattern: str, root: str) -> str | None:
    """The folder one gitignore-style pattern can match files beneath; None for no folder."""
    if not pattern or pattern.startswith(("#", "!")):
        return None  # a comment, or an exclusion: it only narrows, so the kernel ignores it
    directory_only = pattern.endswith("/")
    body = pattern.strip("/")
    if not body:
        return ROOT
    if "/" not in pattern.rstrip("/"):
        return ROOT  # no slash but at the end: gitignore matches it at any depth
    literal: list[str] = []
    parts = body.split("/")
    for part in parts:
        if part in (".", ".."):
            return None  # never outside the workspace; the pipeline's scope check refuses these
        if part == "" or GLOB_CHARS & set(part):
            return "/".join(literal)
        literal.append(part)
    # the whole pattern is a literal path: the folder itself, or the folder a file sits in
    whole = "/".join(literal)
    if directory_only or os.path.isdir(os.path.join(root, whole)):
        return whole
    return "/".join(literal[:-1])
