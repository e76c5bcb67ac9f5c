"""Claude Code's tools as pipeline calls: Write → write_to_file, Bash → execute_command, …"""

from __future__ import annotations

import json
from typing import Any

from intentd.daemon.agents.hooks.adapter import Mapped
from intentd.daemon.agents.hooks.mapping import (
    MCP_PREFIX,
    command_cwd,
    mcp_call,
    read_regular_text,
    ripgrep_call,
    selection,
    shell_call,
    unknown_tool,
)

__all__ = ["Mapped", "command_cwd", "map_call", "selection"]

AGENT = "claude-code"
# unknown tools are judged as another MCP server's tool would be: destructive
UNKNOWN_PREFIX = f"{MCP_PREFIX}claude_code__"
# Tools that only talk to the session or the person, or start sub-agents whose own tool calls
# come through this hook: intentd has no say, Claude Code's own permissions apply.
NEUTRAL_TOOLS = frozenset({"TodoWrite", "Task", "Agent", "ExitPlanMode", "AskUserQuestion",
                           "BashOutput", "TaskOutput", "KillShell", "KillBash"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS"})


def map_call(name: str, tool_input: Any, cwd: str | None = None) -> Mapped:
    data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    if name in NEUTRAL_TOOLS:
        return Mapped(None)
    if name.startswith(MCP_PREFIX):
        return mcp_call(name, data)
    mapper = _MAPPERS.get(name)
    if mapper is None:
        return unknown_tool(AGENT, name, data)
    mapped: Mapped = mapper(data, cwd)
    return mapped


def _read(data: dict[str, Any], cwd: str | None) -> Mapped:
    return Mapped("read_file", {"path": data.get("file_path")}, read_only=True)


def _glob(data: dict[str, Any], cwd: str | None) -> Mapped:
    return Mapped("list_files", {"path": data.get("path") or cwd or ".", "recursive": True},
                  read_only=True)


def _ls(data: dict[str, Any], cwd: str | None) -> Mapped:
    return Mapped("list_files", {"path": data.get("path") or cwd or "."}, read_only=True)


def _grep(data: dict[str, Any], cwd: str | None) -> Mapped:
    return ripgrep_call(data.get("pattern"), data.get("path"), cwd)


def _write(data: dict[str, Any], cwd: str | None) -> Mapped:
    return Mapped("write_to_file", {"path": data.get("file_path"), "content": data.get("content")})


def _edit(data: dict[str, Any], cwd: str | None) -> Mapped:
    return _edits(data.get("file_path"), [data])


def _multi_edit(data: dict[str, Any], cwd: str | None) -> Mapped:
    edits = data.get("edits")
    return _edits(data.get("file_path"), edits if isinstance(edits, list) else [])


def _edits(path: Any, edits: list[Any]) -> Mapped:
    """Unique replacements map as they are; anything else as the whole file it would produce."""
    pairs = [{"old_str": e.get("old_string"), "new_str": e.get("new_string")}
             for e in edits if isinstance(e, dict)]
    simple = bool(pairs) and all(e.get("old_string") and not e.get("replace_all") for e in edits)
    if not simple and isinstance(path, str):
        after = apply_edits(path, edits)
        if after is not None:  # a new file or replace_all: the person sees the exact result
            return Mapped("write_to_file", {"path": path, "content": after})
    if len(pairs) == 1:
        return Mapped("replace_in_file", {"path": path, **pairs[0]})
    return Mapped("replace_in_file", {"path": path, "edits": pairs})


def apply_edits(path: str, edits: list[Any]) -> str | None:
    """The file's text after Claude Code's edits, or None when they do not apply."""
    try:
        text = read_regular_text(path)
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError):  # a FIFO or device included: never waited on
        return None
    for edit in edits:
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if old == "":
            if text:
                return None
            text = new
        elif old not in text:
            return None
        else:
            text = text.replace(old, new, -1 if edit.get("replace_all") else 1)
    return text


def _notebook(data: dict[str, Any], cwd: str | None) -> Mapped:
    path = data.get("notebook_path")
    content = notebook_after(path, data) if isinstance(path, str) else None
    if content is None and isinstance(path, str):
        content = _current_text(path)  # the gates still see the path; the diff is just empty
    return Mapped("write_to_file", {"path": path, "content": content})


def notebook_after(path: str, data: dict[str, Any]) -> str | None:
    """The notebook JSON after NotebookEdit (replace / insert / delete a cell), when computable."""
    try:
        book = json.loads(read_regular_text(path))
        cells = book["cells"]
        position = _cell_position(cells, data.get("cell_id"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    mode, source = data.get("edit_mode") or "replace", data.get("new_source") or ""
    if position is None or (mode != "insert" and position < 0):
        return None
    if mode == "insert":  # after the given cell, or first when none is given
        kind = data.get("cell_type") or "code"
        extra: dict[str, Any] = {"outputs": [], "execution_count": None} if kind == "code" else {}
        cells.insert(position + 1, {"cell_type": kind, "metadata": {}, "source": source, **extra})
    elif mode == "delete":
        del cells[position]
    else:
        cells[position]["source"] = source
    return json.dumps(book, indent=1, ensure_ascii=False) + "\n"


def _cell_position(cells: list[dict[str, Any]], cell_id: Any) -> int | None:
    """The cell's index; -1 when no cell is named; None when the named cell is not there."""
    if cell_id is None:
        return -1
    for index, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return index
    if isinstance(cell_id, str) and cell_id.startswith("cell-") and cell_id[5:].isdigit():
        index = int(cell_id[5:])
        return index if index < len(cells) else None
    return None


def _current_text(path: str) -> str:
    try:
        return read_regular_text(path, errors="replace")
    except (OSError, UnicodeDecodeError):
        return ""


def _bash(data: dict[str, Any], cwd: str | None) -> Mapped:
    return shell_call(data.get("command"), cwd)


def _web(name: str) -> Any:
    """Web access is not a workspace read: judged like another server's tool (intent, a person)."""
    def mapper(data: dict[str, Any], cwd: str | None) -> Mapped:
        return Mapped(f"{UNKNOWN_PREFIX}{name}", data)
    return mapper


_MAPPERS = {
    "Read": _read, "Glob": _glob, "LS": _ls, "Grep": _grep,
    "Write": _write, "Edit": _edit, "MultiEdit": _multi_edit, "NotebookEdit": _notebook,
    "Bash": _bash, "WebFetch": _web("WebFetch"), "WebSearch": _web("WebSearch"),
}
