"""What a file edit would change, as a unified diff, for the person asked to approve it."""

from __future__ import annotations

import difflib
import os
from typing import TYPE_CHECKING

from intentd.daemon.tools.base import ToolFailed
from intentd.daemon.tools.fileio import read_text
from intentd.daemon.tools.files import preview_replace

if TYPE_CHECKING:
    from intentd.daemon.engine.engine import Evaluation

MAX_DIFF_SOURCE_BYTES = 4 * 1024 * 1024


def proposed_diff(ev: Evaluation) -> str | None:
    """The unified diff of a write_to_file / replace_in_file call; None for other tools."""
    ctx = ev.ctx
    if ctx.name not in ("write_to_file", "replace_in_file") or not ctx.paths:
        return None
    path = ctx.paths[0]
    try:
        before = read_text(path.absolute) if os.path.isfile(path.absolute) else ""
        after = (ctx.args["content"] if ctx.name == "write_to_file"
                 else preview_replace(path.absolute, ctx.args))
    except (ToolFailed, OSError) as exc:
        return f"(no diff: {exc})"
    if len(before) + len(after) > MAX_DIFF_SOURCE_BYTES:
        return "(no diff: the file is too large to show)"
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 f"a/{path.shown}", f"b/{path.shown}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
