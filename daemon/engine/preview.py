"""What a file edit would change, as a unified diff, for the person asked to approve it."""

from __future__ import annotations

import difflib
import hashlib
import os
from typing import TYPE_CHECKING

from intentd.daemon.tools.base import ToolFailed
from intentd.daemon.tools.fileio import decode, read_bytes, sha256_file
from intentd.daemon.tools.files import apply_edits

if TYPE_CHECKING:
    from intentd.daemon.engine.engine import Evaluation

MAX_DIFF_SOURCE_BYTES = 4 * 1024 * 1024


def proposed_diff(ev: Evaluation) -> str | None:
    """The unified diff of a write_to_file / replace_in_file call; None for other tools. The
    file's bytes it was made from are remembered (`ev.shown`): the call, once approved, writes
    over those or nothing (tools.files.as_shown, steps.as_shown)."""
    ctx = ev.ctx
    if ctx.name not in ("write_to_file", "replace_in_file") or not ctx.paths:
        return None
    path = ctx.paths[0]
    try:
        data = read_bytes(path.absolute) if os.path.isfile(path.absolute) else None
    except (ToolFailed, OSError) as exc:  # over the read cap, a FIFO: the file as it is
        ev.shown = {path.absolute: _digest_now(path.absolute)}
        return f"(no diff: {exc})"
    ev.shown = {path.absolute: hashlib.sha256(data).hexdigest() if data is not None else None}
    try:
        before = decode(data, path.shown) if data is not None else ""
        after = (ctx.args["content"] if ctx.name == "write_to_file"
                 else apply_edits(before, ctx.args, ctx.args["path"]))
    except ToolFailed as exc:
        return f"(no diff: {exc})"
    if len(before) + len(after) > MAX_DIFF_SOURCE_BYTES:
        return "(no diff: the file is too large to show)"
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 f"a/{path.shown}", f"b/{path.shown}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _digest_now(path: str) -> str | None:
    try:
        return sha256_file(path)
    except OSError:
        return ""  # unreadable: matches no file, so an approval of it writes nothing
