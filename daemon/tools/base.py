"""What a tool is: a name, an argument schema, a kind (read / edit / command / meta) and an executor."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from intentd.daemon.tools.schema import JsonSchema


class ToolKind(str, Enum):
    READ = "read"        # reads the workspace, changes nothing
    EDIT = "edit"        # writes files: destructive
    COMMAND = "command"  # runs a shell command: destructive unless proven read-only
    META = "meta"        # talks to the session or the person only (never gated by intent)
    MCP = "mcp"          # a tool of another MCP server, seen only through tools/authorize


class ToolFailed(Exception):
    """The tool ran and failed in a way the agent should be told about (not a crash)."""


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    output: str
    data: dict[str, Any] = field(default_factory=dict)
    # absolute paths -> sha256 after the call, for the receipt and the stale-file check
    written: dict[str, str | None] = field(default_factory=dict)
    read: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "output": self.output, **({"data": self.data} if self.data else {})}


@dataclass(frozen=True)
class ToolContext:
    root: str                    # the workspace root, resolved
    paths: tuple[str, ...]       # the call's paths, resolved by the pipeline (same order as Tool.paths)
    cwd: str                     # resolved working directory for commands
    intents_lookup: Callable[[str], Any]  # id -> Intent | None, from the call's config snapshot
    is_ignored: Callable[[str], bool]     # workspace-relative path -> hidden by the ignore rules
    sandbox: Any = None  # a command's SandboxRequest (scope, network); None: nothing writable
    # a file tool's paths, each an Anchor (tools.anchor) held open since the gates checked it
    anchors: tuple[Any, ...] = ()
    # an edit a person approved from its diff: each file as shown (sha256; None: absent), which
    # the tool finds again before it writes, or refuses
    shown: Mapping[str, str | None] | None = None


Executor = Callable[[ToolContext, dict[str, Any]], ToolResult]


def no_paths(args: dict[str, Any]) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: JsonSchema
    kind: ToolKind
    execute: Executor
    # the raw path arguments the call touches (validated args in, paths out)
    paths: Callable[[dict[str, Any]], tuple[str, ...]] = no_paths
    # checks the schema cannot express; returns an error message or None
    check: Callable[[dict[str, Any]], str | None] | None = None

    @property
    def destructive(self) -> bool:
        return self.kind in (ToolKind.EDIT, ToolKind.COMMAND, ToolKind.MCP)

    def to_anthropic(self) -> dict[str, Any]:
        """The tool as an Anthropic Messages API tool definition."""
        return {"name": self.name, "description": self.description, "input_schema": self.schema}
