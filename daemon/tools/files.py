"""The file tools: read_file, write_to_file, replace_in_file."""

from __future__ import annotations

import hashlib
import itertools
from typing import Any

from intentd.daemon.tools import fileio
from intentd.daemon.tools.anchor import Anchor
from intentd.daemon.tools.base import Tool, ToolContext, ToolFailed, ToolKind, ToolResult
from intentd.daemon.tools.fileio import (
    decode,
    open_checked,
    read_bytes,
    read_text,
    sha256_file,
    sha256_text,
    write_text,
)

MAX_CONTENT_CHARS = 10 * 1024 * 1024


def _path_only(args: dict[str, Any]) -> tuple[str, ...]:
    return (args["path"],)


def _anchor(ctx: ToolContext) -> Anchor | None:
    """The path's folder, held open since the gates checked it (when the engine took it)."""
    return ctx.anchors[0] if ctx.anchors else None


def read_file(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    path = ctx.paths[0]
    start, end = args.get("start_line"), args.get("end_line")
    if start is None and end is None:
        text = read_text(path, _anchor(ctx))
    else:
        text = _read_lines(path, start or 1, end, _anchor(ctx))
    digest = sha256_file(path)
    return ToolResult(True, text, read={path: digest} if digest else {})


def _read_lines(path: str, start: int, end: int | None, anchor: Anchor | None) -> str:
    parts: list[bytes] = []
    size = 0
    with open_checked(path, anchor) as handle:
        for line in itertools.islice(handle, start - 1, end):
            size += len(line)
            if size > fileio.READ_CAP_BYTES:
                raise ToolFailed(f"lines {start}-{end or 'end'} are over the "
                                 f"{fileio.READ_CAP_BYTES}-byte read cap: read fewer lines")
            parts.append(line)
    return decode(b"".join(parts), path)


def as_shown(ctx: ToolContext, path: str, digest: str | None, shown: str) -> None:
    """An edit a person approved from its diff writes over the file the diff was made from:
    one the agent changed meanwhile (and read again, so no stale check stops it) is refused."""
    if ctx.shown is not None and ctx.shown.get(path, "") != digest:
        raise ToolFailed(changed_since_shown(shown))


def changed_since_shown(shown: str) -> str:
    return (f"{shown} changed after the person was shown the diff; nothing was written: send the "
            "call again, and the person is shown the file as it is now")


def write_to_file(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    path, content = ctx.paths[0], args["content"]
    digest = sha256_file(path)
    existed = digest is not None
    as_shown(ctx, path, digest, args["path"])
    write_text(path, content, _anchor(ctx))
    verb = "overwrote" if existed else "created"
    return ToolResult(True, f"{verb} {args['path']} ({len(content)} characters)",
                      written={path: sha256_text(content)})


def _edits(args: dict[str, Any]) -> list[dict[str, str]]:
    if "edits" in args:
        return list(args["edits"])
    return [{"old_str": args["old_str"], "new_str": args["new_str"]}]


def check_replace(args: dict[str, Any]) -> str | None:
    single = "old_str" in args or "new_str" in args
    if single == ("edits" in args):
        return "give either old_str and new_str, or a list of edits, not both"
    if single and not ("old_str" in args and "new_str" in args):
        return "old_str and new_str go together"
    if any(edit["old_str"] == "" for edit in _edits(args)):
        return "old_str must not be empty"
    return None


def apply_edits(text: str, args: dict[str, Any], shown: str) -> str:
    """The text after every edit, in order; each old_str must occur exactly once."""
    for number, edit in enumerate(_edits(args), start=1):
        count = text.count(edit["old_str"])
        if count != 1:
            where = "not found" if count == 0 else f"found {count} times (it must be unique)"
            raise ToolFailed(f"edit {number}: old_str {where} in {shown}; nothing was changed")
        text = text.replace(edit["old_str"], edit["new_str"], 1)
    return text


def replace_in_file(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    path = ctx.paths[0]
    data = read_bytes(path, _anchor(ctx))
    as_shown(ctx, path, hashlib.sha256(data).hexdigest(), args["path"])
    text = apply_edits(decode(data, path), args, args["path"])
    write_text(path, text, _anchor(ctx))
    return ToolResult(True, f"applied {len(_edits(args))} edit(s) to {args['path']}",
                      written={path: sha256_text(text)})


_PATH = {"type": "string", "minLength": 1, "maxLength": 4096,
         "description": "Path relative to the workspace root."}
_EDIT = {"type": "object", "additionalProperties": False, "required": ["old_str", "new_str"],
         "properties": {"old_str": {"type": "string"}, "new_str": {"type": "string"}}}

READ_FILE = Tool(
    name="read_file",
    description="Read a text file of the workspace, whole or a range of lines (1-based, inclusive).",
    schema={"type": "object", "additionalProperties": False, "required": ["path"], "properties": {
        "path": _PATH,
        "start_line": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1}}},
    kind=ToolKind.READ, execute=read_file, paths=_path_only,
    check=lambda a: ("end_line must be ≥ start_line"
                     if a.get("end_line", 1 << 62) < a.get("start_line", 1) else None),
)

WRITE_TO_FILE = Tool(
    name="write_to_file",
    description="Create a file or replace its whole content (atomic; parent folders are created). "
                "Overwriting an existing file requires having read it first.",
    schema={"type": "object", "additionalProperties": False, "required": ["path", "content"],
            "properties": {"path": _PATH,
                           "content": {"type": "string", "maxLength": MAX_CONTENT_CHARS}}},
    kind=ToolKind.EDIT, execute=write_to_file, paths=_path_only,
)

REPLACE_IN_FILE = Tool(
    name="replace_in_file",
    description="Replace exact text in a file: old_str must occur exactly once. Give old_str and "
                "new_str, or `edits`, a list of them applied in order (all or nothing).",
    schema={"type": "object", "additionalProperties": False, "required": ["path"], "properties": {
        "path": _PATH,
        "old_str": {"type": "string"}, "new_str": {"type": "string"},
        "edits": {"type": "array", "items": _EDIT, "minItems": 1, "maxItems": 100}}},
    kind=ToolKind.EDIT, execute=replace_in_file, paths=_path_only, check=check_replace,
)
