"""`intentd mcp`: the built-in tools as an MCP server over stdio, each call through the pipeline."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from intentd.daemon import __version__
from intentd.daemon.agents.calls import CallResult
from intentd.daemon.agents.gateway import Gateway, GatewayError, open_gateway
from intentd.daemon.agents.prompt import handshake_section, workspace_facts
from intentd.daemon.tools.base import Tool
from intentd.daemon.tools.registry import BUILTIN_TOOLS
from intentd.daemon.utils.workspaces import here

NO_DAEMON = ("it needs a person's approval, and no intentd daemon is running to ask one: start "
             "`intentd serve` (and the desktop app), then restart this MCP server")


# (readOnlyHint, destructiveHint, idempotentHint, openWorldHint), in the MCP spec's meaning:
# read-only = changes nothing around it; destructive = may overwrite or delete, not only add;
# idempotent = the same call again has no further effect; open world = may reach entities
# beyond a closed domain (a shell command can reach the network and any program).
HINTS: dict[str, tuple[bool, bool, bool, bool]] = {
    "read_file": (True, False, True, False),
    "list_files": (True, False, True, False),
    "search_files": (True, False, True, False),
    "write_to_file": (False, True, True, False),      # the same content again changes nothing
    "replace_in_file": (False, True, False, False),   # new_str may hold old_str: again differs
    "execute_command": (False, True, False, True),
    # Changes which writes the session may ask for, nothing around it: a client need not confirm.
    "select_active_intent": (True, False, True, False),
    "ask_followup_question": (True, False, False, False),
    "attempt_completion": (True, False, False, False),
}
UNKNOWN_HINTS = (False, True, False, True)  # the spec's defaults: assume the worst


def tool_annotations(tool: Tool) -> types.ToolAnnotations:
    """What MCP clients show and use to decide whether to confirm a call."""
    read_only, destructive, idempotent, open_world = HINTS.get(tool.name, UNKNOWN_HINTS)
    return types.ToolAnnotations(
        title=tool.name.replace("_", " "),
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


def mcp_tools() -> list[types.Tool]:
    return [types.Tool(name=tool.name, description=tool.description, input_schema=tool.schema,
                       annotations=tool_annotations(tool)) for tool in BUILTIN_TOOLS.values()]


class Bridge:
    """Calls from the MCP client, one at a time, through one pipeline session."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._lock = threading.Lock()  # the daemon client and the engine session are not shared

    def call(self, name: str, args: dict[str, Any]) -> CallResult:
        with self._lock:
            try:
                return self.gateway.call(name, args)
            except GatewayError as exc:
                return CallResult.refused("daemon", str(exc))

    def instructions(self) -> str:
        facts = workspace_facts(self.gateway.workspace, self.gateway.intents())
        intro = (f"Tools of the workspace {self.gateway.workspace}, gated by intentd: a person may "
                 "have to approve a call, and a refusal says why and how to fix it.")
        return "\n\n".join(s for s in (intro, handshake_section(facts)) if s)


def build_server(bridge: Bridge) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=mcp_tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        # a call may wait minutes for a person: keep the event loop free meanwhile
        result = await anyio.to_thread.run_sync(bridge.call, params.name, args)
        text = types.TextContent(type="text", text=result.for_model())
        return types.CallToolResult(content=[text], is_error=result.is_error)

    return Server("intentd", version=__version__, instructions=bridge.instructions(),
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(args: argparse.Namespace) -> int:
    """stdout is the MCP wire: every notice goes to stderr."""
    from intentd.daemon.agents.approver import refuse_without_person

    workspace: Path = args.workspace or here()
    if not workspace.is_dir():
        print(f"intentd mcp: workspace {workspace} is not a folder", file=sys.stderr)
        return 2
    try:
        gateway = open_gateway(workspace, "mcp", socket_path=args.socket,
                               approver=refuse_without_person(NO_DAEMON),
                               in_process=args.in_process, approval_timeout=args.approval_timeout,
                               local_note="no daemon: calls that need a person are refused")
    except GatewayError as exc:
        print(f"intentd mcp: {exc}", file=sys.stderr)
        return 1
    print(f"intentd mcp: serving {workspace} over stdio; pipeline: {gateway.mode} "
          f"({gateway.where})", file=sys.stderr)
    try:
        anyio.run(serve_stdio, build_server(Bridge(gateway)))  # asks the gateway for the intents
    except GatewayError as exc:
        print(f"intentd mcp: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        gateway.close()
    return 0
