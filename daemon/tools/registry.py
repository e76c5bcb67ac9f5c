"""The tool registry: every built-in tool by name, and MCP tools seen through tools/authorize."""

from __future__ import annotations

from typing import Any

from intentd.daemon.tools.base import Tool, ToolContext, ToolFailed, ToolKind, ToolResult
from intentd.daemon.tools.command import EXECUTE_COMMAND
from intentd.daemon.tools.files import READ_FILE, REPLACE_IN_FILE, WRITE_TO_FILE
from intentd.daemon.tools.listing import LIST_FILES, SEARCH_FILES
from intentd.daemon.tools.meta import ASK_FOLLOWUP_QUESTION, ATTEMPT_COMPLETION, SELECT_ACTIVE_INTENT

BUILTIN_TOOLS: dict[str, Tool] = {tool.name: tool for tool in (
    READ_FILE, WRITE_TO_FILE, REPLACE_IN_FILE, LIST_FILES, SEARCH_FILES, EXECUTE_COMMAND,
    SELECT_ACTIVE_INTENT, ASK_FOLLOWUP_QUESTION, ATTEMPT_COMPLETION,
)}

# Claude Code names another MCP server's tools `mcp__<server>__<tool>`.
MCP_PREFIX = "mcp__"


def _not_here(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    raise ToolFailed("MCP tools run in the client; intentd only authorizes them")


def lookup(name: str) -> Tool | None:
    tool = BUILTIN_TOOLS.get(name)
    if tool is None and name.startswith(MCP_PREFIX) and len(name) <= 200:
        tool = Tool(name=name, description="a tool of another MCP server", schema={"type": "object"},
                    kind=ToolKind.MCP, execute=_not_here)
    return tool


def anthropic_tools() -> list[dict[str, Any]]:
    """Every built-in tool as an Anthropic Messages API tool definition."""
    return [tool.to_anthropic() for tool in BUILTIN_TOOLS.values()]
