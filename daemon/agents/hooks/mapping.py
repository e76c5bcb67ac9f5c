"""Tool mappings every agent shares: a shell command, an MCP tool, an unknown tool, the select."""

from __future__ import annotations

import os
import shlex
import stat
from typing import Any

from intentd.daemon.agents.hooks.adapter import Mapped

MCP_PREFIX = "mcp__"  # the registry's prefix for other MCP servers' tools (tools/registry.py)
# `intentd mcp` registered as the server "intentd": its tools are gated by the server itself,
# and only its select_active_intent is a selection (another server's tool of that name is not)
INTENTD_MCP_PREFIX = f"{MCP_PREFIX}intentd__"
INTENTD_SELECT = f"{INTENTD_MCP_PREFIX}select_active_intent"
SELECT_COMMAND = ("intentd", "hook", "select")


def selection(command: str) -> str | None:
    """The intent id of exactly `intentd hook select ID`; anything more is an ordinary command."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) == 6 and words[4] == "--socket" and words[5]:  # the socket is the hook's own
        words = words[:4]
    elif len(words) == 5 and words[4].startswith("--socket=") and len(words[4]) > 9:
        words = words[:4]
    if len(words) == 4 and tuple(words[:3]) == SELECT_COMMAND and words[3]:
        return words[3]
    return None


def shell_call(command: Any, cwd: str | None) -> Mapped:
    """A shell command: the select command, else `execute_command` in the agent's cwd."""
    intent_id = selection(command) if isinstance(command, str) else None
    if intent_id is not None:
        return Mapped(None, select=intent_id)
    args: dict[str, Any] = {"command": command if isinstance(command, str) else None}
    if cwd:
        args["cwd"] = cwd
    return Mapped("execute_command", args)


def mcp_call(name: str, args: Any) -> Mapped:
    """`mcp__SERVER__TOOL`: passed through; the intentd server's tools are its own to gate."""
    data: dict[str, Any] = args if isinstance(args, dict) else {}
    if name == INTENTD_SELECT and isinstance(data.get("intent_id"), str):
        return Mapped(None, select=data["intent_id"])
    if name.startswith(INTENTD_MCP_PREFIX):
        return Mapped(None)  # not gated twice (and not asked twice)
    return Mapped(name[:200], data)


def unknown_tool(agent: str, name: str, args: Any) -> Mapped:
    """A tool intentd does not know: judged as another MCP server's tool would be (destructive)."""
    agent_part = agent.replace("-", "_")
    data: dict[str, Any] = args if isinstance(args, dict) else {"input": args}
    return Mapped(f"{MCP_PREFIX}{agent_part}__{name}"[:200], data)


def read_file(path: Any) -> Mapped:
    return Mapped("read_file", {"path": path}, read_only=True)


def list_files(path: Any, recursive: bool = False) -> Mapped:
    args: dict[str, Any] = {"path": path}
    if recursive:
        args["recursive"] = True
    return Mapped("list_files", args, read_only=True)


def write_file(path: Any, content: Any) -> Mapped:
    return Mapped("write_to_file", {"path": path, "content": content})


def replace(path: Any, old: Any, new: Any) -> Mapped:
    return Mapped("replace_in_file", {"path": path, "old_str": old, "new_str": new})


def ripgrep_call(pattern: Any, path: Any, cwd: str | None) -> Mapped:
    """An agent's own search tool (its own ripgrep, which knows nothing of intentd's ignore
    rules). A search of one file is judged as a read of that file. A search of a folder is
    judged as the `rg` command it is, so it is never auto-approved while ignore rules are in
    force (the walk could reach an ignored file) or when the folder is outside the workspace.
    Globs and types only narrow the search, so the command judged leaves them out."""
    path = path or cwd or "."
    if not isinstance(pattern, str) or not isinstance(path, str):
        return Mapped("execute_command", {"command": None}, read_only=True)
    if os.path.isfile(os.path.join(cwd or os.getcwd(), path)):
        # the file found from the agent's cwd, not the same name from the workspace root
        return Mapped("read_file", {"path": os.path.join(cwd, path) if cwd else path},
                      read_only=True)
    # The pattern goes in on standard input: a regex is not a path, and as an argument its
    # `*` and `?` would read as a shell pattern to the checks.
    search = f"rg --file - -- {shlex.quote(path)} <<< {shlex.quote(pattern)}"
    args: dict[str, Any] = {"command": search}
    if cwd:
        args["cwd"] = cwd
    return Mapped("execute_command", args, read_only=True)


def read_regular_text(path: str, errors: str = "strict", limit: int = 64 * 1024 * 1024) -> str:
    """A regular file's text. A FIFO, socket or device is refused at once (OSError), never
    waited on: an agent may put one where a tool call's path points."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return handle.read(limit).decode("utf-8", errors)


def command_cwd(cwd: str | None, root: str) -> str | None:
    """The hook's cwd when it is not the workspace root (commands and searches run there)."""
    if not cwd or os.path.realpath(cwd) == os.path.realpath(root):
        return None
    return cwd
