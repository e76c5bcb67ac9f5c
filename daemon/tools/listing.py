"""The read-only browsing tools: list_files and search_files (ignored paths stay hidden).

Both walk folders by file descriptor without following symlinks (as ripgrep and git grep do):
a symlink to an ignored or external file is listed by name, never read. FIFOs, sockets and
devices are skipped: reading one may wait forever. Searches use RE2, whose matching time is
linear in the text, and stop at a time and a size limit.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import re2

from intentd.daemon.tools.anchor import LIST_FLAGS, READ_FLAGS, Anchor
from intentd.daemon.tools.base import Tool, ToolContext, ToolFailed, ToolKind, ToolResult
from intentd.daemon.utils.paths import relative_to

LIST_CAP = 1000
SEARCH_CAP = 300
SEARCH_FILE_CAP_BYTES = 2 * 1024 * 1024
SEARCH_TOTAL_BYTES = 256 * 1024 * 1024  # read by one search, at most
SEARCH_SECONDS = 10.0                   # spent by one search, at most
SEARCH_LINE_CHARS = 500  # the output per match
SKIP_DIRS = {".git"}


@dataclass(frozen=True)
class Entry:
    path: str        # absolute
    folder_fd: int   # open while the entry is yielded
    name: str
    kind: str        # "dir" | "file" | "link"


def _folder(args: dict[str, Any]) -> tuple[str, ...]:
    return (args.get("path") or ".",)


def _walk(ctx: ToolContext, top: str, recursive: bool) -> Iterator[Entry]:
    """Entries below `top`, sorted, skipping .git, ignored paths and special files."""
    try:
        with Anchor(top) as anchor:
            fd = anchor.open_folder()
    except FileNotFoundError:
        raise ToolFailed(f"folder not found: {top}") from None
    except NotADirectoryError:
        raise ToolFailed(f"{top} is not a folder") from None
    yield from _walk_fd(ctx, fd, top, recursive)


def _walk_fd(ctx: ToolContext, fd: int, folder: str, recursive: bool) -> Iterator[Entry]:
    try:
        with os.scandir(fd) as scan:
            entries = sorted(scan, key=lambda e: e.name)
        for item in entries:
            kind = _kind(item)
            if kind is None or (kind == "dir" and item.name in SKIP_DIRS):
                continue
            path = os.path.join(folder, item.name)
            relative = relative_to(ctx.root, path)
            if relative is not None and ctx.is_ignored(relative):
                continue
            yield Entry(path, fd, item.name, kind)
            if kind == "dir" and recursive:
                try:
                    child = os.open(item.name, LIST_FLAGS, dir_fd=fd)
                except OSError:
                    continue  # gone, or swapped for a symlink meanwhile: not followed
                yield from _walk_fd(ctx, child, path, recursive)
    finally:
        os.close(fd)


def _kind(item: os.DirEntry[str]) -> str | None:
    if item.is_symlink():
        return "link"
    if item.is_dir(follow_symlinks=False):
        return "dir"
    if item.is_file(follow_symlinks=False):
        return "file"
    return None  # FIFO, socket, device


def list_files(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    lines: list[str] = []
    for entry in _walk(ctx, ctx.paths[0], bool(args.get("recursive", False))):
        if len(lines) == LIST_CAP:
            lines.append(f"... (capped at {LIST_CAP} entries: list a subfolder)")
            break
        lines.append(_shown(ctx, entry.path) + ("/" if entry.kind == "dir" else ""))
    return ToolResult(True, "\n".join(lines) if lines else "(empty folder)",
                      data={"count": min(len(lines), LIST_CAP)})


def compile_search(pattern: str) -> Any:
    """The pattern for RE2, line by line (multi-line mode); clear errors for what RE2 lacks."""
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(("(?m)" + pattern).encode("utf-8"), options)
    except re2.error as exc:
        try:
            re.compile(pattern)
        except re.error as python_exc:
            raise ToolFailed(f"regex is not valid: {python_exc}") from None
        raise ToolFailed(f"regex is not supported: search_files uses RE2, which runs in time "
                         f"linear in the text, and has no backreferences or lookaround ({exc})"
                         ) from None


def search_files(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    pattern = compile_search(args["regex"])
    glob = args.get("file_pattern") or "*"
    matches: list[str] = []
    deadline, budget = time.monotonic() + SEARCH_SECONDS, SEARCH_TOTAL_BYTES
    for entry in _walk(ctx, ctx.paths[0], recursive=True):
        if time.monotonic() >= deadline:
            return _stopped(matches, f"stopped after {SEARCH_SECONDS:g} s")
        if entry.kind != "file" or not fnmatch.fnmatchcase(entry.name, glob):
            continue
        data = _read_regular(entry)
        if data is None:
            continue
        budget -= len(data)
        if budget < 0:
            return _stopped(matches, f"stopped after reading {SEARCH_TOTAL_BYTES} bytes")
        for number, line in matching_lines(pattern, data):
            matches.append(f"{_shown(ctx, entry.path)}:{number}: {line}")
            if len(matches) > SEARCH_CAP:
                matches[-1] = f"... (capped at {SEARCH_CAP} matches: narrow the search)"
                return ToolResult(True, "\n".join(matches), data={"count": SEARCH_CAP})
    return ToolResult(True, "\n".join(matches) if matches else "no matches",
                      data={"count": len(matches)})


def _stopped(matches: list[str], why: str) -> ToolResult:
    return ToolResult(True, "\n".join([*matches, f"... ({why}: narrow the search)"]),
                      data={"count": len(matches), "stopped": why})


def _read_regular(entry: Entry) -> bytes | None:
    """The file's bytes; None for one that is too big, binary, or no longer a regular file."""
    try:
        fd = os.open(entry.name, READ_FLAGS, dir_fd=entry.folder_fd)
    except OSError:
        return None  # gone, a symlink or a socket swapped in meanwhile
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > SEARCH_FILE_CAP_BYTES:
            return None
        data = handle.read(info.st_size + 1)  # not the cap: a large buffer per file costs
    if len(data) > SEARCH_FILE_CAP_BYTES or b"\x00" in data[:8192]:
        return None
    return data


def matching_lines(pattern: Any, data: bytes) -> Iterator[tuple[int, str]]:
    """(line number, line) of each line the pattern matches on its own. RE2 scans the whole
    buffer; a match that runs past its line's end is checked against that line alone."""
    position, number, counted = 0, 1, 0
    while position <= len(data):
        found = pattern.search(data, position)
        if found is None:
            return
        start = data.rfind(b"\n", 0, found.start()) + 1
        end = data.find(b"\n", found.start())
        end = len(data) if end < 0 else end
        line = data[start:end]
        if found.end() <= end or pattern.search(line) is not None:
            number += data.count(b"\n", counted, start)
            counted = start
            yield number, line.decode("utf-8", "replace")[:SEARCH_LINE_CHARS].rstrip()
        position = end + 1


def _shown(ctx: ToolContext, path: str) -> str:
    """The path as text: a name that is not UTF-8 is shown with U+FFFD (it is not a tool path)."""
    shown = relative_to(ctx.root, path) or path
    return shown.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


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
    description=f"Search files below a folder for a regular expression (RE2 syntax: Python's, "
                f"without backreferences or lookaround), line by line, optionally only files "
                f"whose name matches file_pattern (a glob such as *.py). At most {SEARCH_CAP} "
                f"matches; symlinks are not followed.",
    schema={"type": "object", "additionalProperties": False, "required": ["regex"], "properties": {
        "path": _FOLDER,
        "regex": {"type": "string", "minLength": 1, "maxLength": 1000},
        "file_pattern": {"type": "string", "maxLength": 200}}},
    kind=ToolKind.READ, execute=search_files, paths=_folder,
)
