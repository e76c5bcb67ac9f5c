"""Workspace-relative path handling."""

from __future__ import annotations

import os
import posixpath

from .errors import InvalidPath


def normalize(path: str) -> str:
    """A clean workspace-relative posix path, or InvalidPath for anything that escapes or is odd."""
    if not path or "\0" in path:
        raise InvalidPath(f"invalid path {path!r}")
    clean = posixpath.normpath(path.replace(os.sep, "/"))
    if clean.startswith(("/", "../")) or clean == "..":
        raise InvalidPath(f"path {path!r} is not inside the workspace")
    if clean == ".":
        raise InvalidPath(f"path {path!r} names the workspace itself, not a file in it")
    return clean


def in_git_dir(rel: str) -> bool:
    """True for a `.git` folder (any repository, nested or not) or anything inside one."""
    return ".git" in rel.split("/")


def under(rel: str, prefix: str) -> bool:
    """True when rel is prefix itself or lies inside the folder prefix."""
    return rel == prefix or rel.startswith(prefix + "/")
