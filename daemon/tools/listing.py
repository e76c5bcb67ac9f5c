"""The read-only browsing tools: list_files and search_files (ignored paths stay hidden)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from typing import Any

from intentd.daemon.engine.paths import relative_to
from intentd.daemon.tools.base import Tool, ToolContext, ToolFailed, ToolKind, ToolResult

LIST_CAP = 1000
SEARCH_CAP = 300
SEARCH_FILE_CAP_BYTES = 2 * 1024 * 1024
SEARCH_LINE_CHARS = 500  # bounds regex work per line and the output per match
SKIP_DIRS = {".git"}


def _folder(args: dict[str, Any]) -> tuple[str, ...]:
    return (args.get("path") or ".",)


def _walk(ctx: ToolContext, top: str, recursive: bool) -> Iterator[tuple[str, bool]]:
    """(absolute path, is_dir) below `top`, sorted, skipping .git and ignored paths."""
    try:
        entries = sorted(os.scandir(top), key=lambda e: e.name)
    except NotADirectoryError:
        raise ToolFailed(f"{top} is not a folder") from None
    except FileNotFoundError:
        raise ToolFailed(f"folder not found: {top}") from None
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in SKIP_DIRS:
            continue
        relative = relative_to(ctx.root, entry.path)
        if relative is not None and ctx.is_ignored(relative):
            continue
        yield entry.path, is_dir
        if is_dir and recursive:
            yield from _walk(ctx, entry.path, recursive)


def list_files(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    top = ctx.paths[0]
    lines: list[str] = []
    for path, is_dir in _walk(ctx, top, bool(args.get("recursive", False))):
        if len(lines) == LIST_CAP:
            lines.append(f"... (capped at {LIST_CAP} entries: list a subfolder)")
            break
        lines.append(_shown(ctx, path) + ("/" if is_dir else ""))
    return ToolResult(True, "\n".join(lines) if lines else "(empty folder)",
                      data={"count": min(len(lines), LIST_CAP)})


def search_files(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    try:
        pattern = re.compile(args["regex"])
    except re.error as exc:
        raise ToolFailed(f"regex is not valid: {exc}") from None
    glob = args.get("file_pattern") or "*"
    matches: list[str] = []
    for path, is_dir in _walk(ctx, ctx.paths[0], recursive=True):
        if is_dir or not fnmatch.fnmatchcase(os.path.basename(path), glob):
            continue
        for number, line in _text_lines(path):
            if pattern.search(line):
                matches.append(f"{_shown(ctx, path)}:{number}: {line.rstrip()}")
                if len(matches) > SEARCH_CAP:
                    matches[-1] = f"... (capped at {SEARCH_CAP} matches: narrow the search)"
                    return ToolResult(True, "\n".join(matches), data={"count": SEARCH_CAP})
    return ToolResult(True, "\n".join(matches) if matches else "no matches",
                      data={"count": len(matches)})


def _text_lines(path: str) -> Iterator[tuple[int, str]]:
    try:
        if os.path.getsize(path) > SEARCH_FILE_CAP_BYTES:
            return
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return
    if b"\x00" in data[:8192]:
        return
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        yield number, line[:SEARCH_LINE_CHARS]


def _shown(ctx: ToolContext, path: str) -> str:
    return relative_to(ctx.root, path) or path


_FOLDER = {"type": "string", "minLength": 1, "maxLength": 4096,
           "description": "Folder relative to the workspace root (default: the root)."}

LIST_FILES = Tool(
    name="list_files",
    description=f"List a folder's entries (folders end with /); recursive lists the whole tree. "
                f"At most {LIST_CAP} entries.",
    schema={"type": "object", "additionalProperties": False, "properties": {
        "path": _FOLDER, "recursive": {"type": "boolean"}}},
    kind=ToolKind.READ, execute=list_files, paths=_folder,
)

SEARCH_FILES = Tool(
    name="search_files",
    description=f"Search files below a folder for a Python regex, optionally only files whose "
                f"name matches file_pattern (a glob such as *.py). At most {SEARCH_CAP} matches.",
    schema={"type": "object", "additionalProperties": False, "required": ["regex"], "properties": {
        "path": _FOLDER,
        "regex": {"type": "string", "minLength": 1, "maxLength": 1000},
        "file_pattern": {"type": "string", "maxLength": 200}}},
    kind=ToolKind.READ, execute=search_files, paths=_folder,
)
