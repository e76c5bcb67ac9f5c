"""Cursor's agent hooks (`.cursor/hooks.json`, version 1): its payloads, tools and answers.

Each gated call is gated once, by the most specific hook Cursor has for it:
- `beforeShellExecution`: shell commands (its `ask` is Cursor's own approval prompt);
- `beforeMCPExecution`: MCP tools (`ask` likewise);
- `beforeReadFile`: every file the agent reads, attachments included (allow or deny);
- `preToolUse`: every other tool (Write, StrReplace, Delete, Grep, ...; allow or deny: Cursor
  does not enforce `ask` there). It answers `{}` for Shell, Read and MCP tools, which the hooks
  above gate.
Reports: `postToolUse` / `postToolUseFailure` (by tool_use_id), `afterShellExecution`,
`afterMCPExecution`, and `afterFileEdit` for edits. A shell command is reported by whichever of
`afterShellExecution` and `postToolUse` comes first (paired by command and cwd); Cursor ignores
the answer to `afterShellExecution`, so what the scope audit undid waits for the command's
`postToolUse`, whose `additional_context` reaches the model. `sessionStart` adds the handshake.
Answers are JSON on stdout with exit 0 (`{"permission": ...}`); Cursor reads exit 2 as deny,
which the hook uses when it cannot even parse its input.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    EventKind,
    HookEvent,
    HookInputError,
    Mapped,
    Reply,
    derived_call_key,
    text_field,
)
from intentd.daemon.agents.hooks.mapping import (
    list_files,
    mcp_call,
    read_file,
    replace,
    ripgrep_call,
    shell_call,
    unknown_tool,
    write_file,
)

if TYPE_CHECKING:
    from intentd.daemon.agents.hooks.install import Installer

AGENT = "cursor"
EVENTS: dict[str, EventKind] = {
    "preToolUse": "pre_tool", "beforeShellExecution": "pre_tool",
    "beforeMCPExecution": "pre_tool", "beforeReadFile": "pre_tool",
    "postToolUse": "post_tool", "postToolUseFailure": "post_tool",
    "afterShellExecution": "post_tool", "afterMCPExecution": "post_tool",
    "afterFileEdit": "post_tool", "sessionStart": "session_start", "sessionEnd": "session_end"}
ASKS = frozenset({"beforeShellExecution", "beforeMCPExecution"})  # Cursor enforces "ask" here
# preToolUse leaves these to the specific hooks above (one gate per call, not two)
DEFERRED = frozenset({"Shell", "Read"})
POST_TOOL = frozenset({"postToolUse", "postToolUseFailure"})
IGNORED_ANSWERS = frozenset({"afterShellExecution"})  # Cursor does not read what these answer
NEUTRAL = frozenset({"Task", "TodoWrite", "Todo", "AskQuestion", "SwitchMode"})
WRITES = frozenset({"Write", "Edit", "StrReplace", "MultiEdit", "Delete", "EditNotebook"})
SHELL, MCP, READ = "Shell", "MCP:", "Read"


class CursorAdapter(Adapter):
    name = AGENT
    label = "Cursor"
    hook_timeout = 60.0
    project_dir_env = ("CURSOR_PROJECT_DIR",)
    select_hint = ("In Cursor, select an intent by running the terminal command "
                   "`intentd hook select <INTENT_ID>`.")
    shell_tool = "terminal"

    def installer(self) -> Installer:
        from intentd.daemon.agents.hooks.cursor_install import INSTALLER

        return INSTALLER

    def event(self, hook_event: str | None, payload: Any) -> HookEvent:
        if not isinstance(payload, dict):
            raise HookInputError("the hook input is not a JSON object")
        # the event the command was installed for wins: a gate's input is judged as a gate's
        name = str(hook_event or payload.get("hook_event_name") or "")
        roots = payload.get("workspace_roots")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
        common: dict[str, Any] = {
            "kind": EVENTS.get(name, "other"), "name": name, "workspace": root, "payload": payload,
            "session_key": text_field(payload, "conversation_id", "session_id") or "",
            "cwd": text_field(payload, "cwd") or root}
        tool, tool_input = call_of(name, payload)
        if name in ("preToolUse", *POST_TOOL) and deferred(tool) \
                and not (name in POST_TOOL and tool == SHELL):
            common["kind"] = "other"  # gated (and reported) by its own specific hook
        key = call_key_of(name, payload, tool, tool_input)
        failed = name == "postToolUseFailure"
        output = text_field(payload, "tool_output", "output", "result_json", "error_message")
        return HookEvent(tool_name=tool, tool_input=tool_input, call_key=key, ok=not failed,
                         output=output or "", **common)

    def map_tool(self, tool_name: str, tool_input: Any, cwd: str | None) -> Mapped:
        data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
        if tool_name.startswith(MCP):
            return mcp_call(tool_name[len(MCP):], data.get("arguments"))
        if tool_name == SHELL:
            return shell_call(data.get("command"), text_field(data, "cwd", "working_directory")
                              or cwd)
        if tool_name in NEUTRAL:
            return Mapped(None)
        path = file_path(data)
        if tool_name == READ:
            return read_file(path)
        if tool_name in ("Write", "EditNotebook"):
            return write_file(path, first(data, "contents", "content", "file_text"))
        if tool_name in ("Edit", "StrReplace", "MultiEdit"):
            return replace(path, first(data, "old_string", "old_str"),
                           first(data, "new_string", "new_str"))
        if tool_name == "Delete":  # deleting a file is what `rm` does, and judged as such
            return shell_call(f"rm -- {shlex.quote(path)}" if isinstance(path, str) else None, cwd)
        if tool_name == "Grep":
            return ripgrep_call(data.get("pattern"), path, cwd)
        if tool_name in ("Glob", "LS", "ListDir"):
            return list_files(path or cwd or ".", recursive=tool_name == "Glob")
        return unknown_tool(AGENT, tool_name, data)

    def native_prompt(self, event: HookEvent) -> bool:
        return event.name in ASKS

    def turn(self, event: HookEvent) -> str | None:
        return text_field(event.payload, "generation_id")  # changes with every user message

    def reports_at_once(self, event: HookEvent) -> bool:
        return event.name == "beforeReadFile"  # Cursor sends no "after" for a read

    def answer_ignored(self, event: HookEvent) -> bool:
        return event.name in IGNORED_ANSWERS

    def allow(self, event: HookEvent, reason: str, context: str | None = None) -> Reply:
        answer: dict[str, Any] = {"permission": "allow"}
        if context and event.name != "beforeReadFile":
            answer["agent_message"] = context
        return Reply.json(answer)

    def deny(self, event: HookEvent | None, reason: str) -> Reply:
        answer: dict[str, Any] = {"permission": "deny", "user_message": reason}
        if event is None:  # input it could not read: exit 2 is a deny for every Cursor hook
            return Reply.json({**answer, "agent_message": reason}, exit_code=2,
                              stderr=reason + "\n")
        if event.name != "beforeReadFile":
            answer["agent_message"] = reason
        return Reply.json(answer)

    def ask(self, event: HookEvent, reason: str) -> Reply:
        if event.name not in ASKS:
            return self.deny(event, reason)
        return Reply.json({"permission": "ask", "user_message": reason, "agent_message": reason})

    def no_opinion(self, event: HookEvent | None) -> Reply:
        return Reply.json({})  # Cursor expects JSON on every path

    def context(self, event: HookEvent, text: str) -> Reply:
        if event.name in ("sessionStart", "postToolUse", "postToolUseFailure"):
            return Reply.json({"additional_context": text})
        return self.no_opinion(event)


def call_of(name: str, payload: Mapping[str, Any]) -> tuple[str, Any]:
    """The call in preToolUse's terms (tool name and input) whichever hook sent it."""
    if name in ("beforeShellExecution", "afterShellExecution"):
        return SHELL, {"command": payload.get("command"), "cwd": payload.get("cwd")}
    if name in ("beforeMCPExecution", "afterMCPExecution"):
        return f"{MCP}{mcp_name(payload)}", {"arguments": mcp_arguments(payload.get("tool_input"))}
    if name == "beforeReadFile":
        return READ, {"file_path": payload.get("file_path")}
    if name == "afterFileEdit":
        return "Edit", {"file_path": payload.get("file_path"), "edits": payload.get("edits")}
    if name in ("preToolUse", "postToolUse", "postToolUseFailure"):
        tool = payload.get("tool_name")
        if not isinstance(tool, str):
            if name == "preToolUse":
                raise HookInputError("preToolUse without a tool_name")
            return "", None
        return tool, payload.get("tool_input")
    return "", None


def call_key_of(name: str, payload: Mapping[str, Any], tool: str, tool_input: Any) -> str:
    """How an "after" finds its "before": the tool_use_id for tools preToolUse gates, the file
    for edits (afterFileEdit has no id), the call itself for shell and MCP."""
    data = tool_input if isinstance(tool_input, dict) else {}
    if tool in WRITES or name == "afterFileEdit":
        path = file_path(data)
        if isinstance(path, str):
            return "file:" + os.path.abspath(os.path.join(str(payload.get("cwd") or ""), path))
    if name in ("preToolUse", *POST_TOOL) and not deferred(tool):
        use_id = payload.get("tool_use_id")
        if isinstance(use_id, str) and use_id:
            return use_id
    if tool == SHELL:  # the shell hooks name its cwd `cwd`, postToolUse `working_directory`
        cwd = text_field(data, "cwd", "working_directory") or text_field(payload, "cwd")
        return derived_call_key(tool, {"command": data.get("command"),
                                       "cwd": os.path.normpath(cwd) if cwd else None})
    return derived_call_key(tool, tool_input)


def deferred(tool: str) -> bool:
    """A tool preToolUse leaves to its specific hook (shell, read, MCP)."""
    return tool in DEFERRED or tool.startswith(MCP)


def mcp_name(payload: Mapping[str, Any]) -> str:
    """`mcp__SERVER__TOOL`: the server named by its command's program or its URL's host
    (Cursor sends no server name); `intentd mcp` is the server "intentd"."""
    tool = str(payload.get("tool_name") or "")
    server = "unknown"
    command, url = payload.get("command"), payload.get("url")
    if isinstance(command, str) and command.strip():
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        program = os.path.basename(words[0]) if words else ""
        server = "intentd" if program == "intentd" and "mcp" in words[1:2] else program
    elif isinstance(url, str) and url:
        server = re.sub(r"^[a-z]+://", "", url).split("/")[0].split(":")[0]
    server = re.sub(r"[^A-Za-z0-9_-]", "_", server) or "unknown"
    return f"mcp__{server}__{tool}"


def mcp_arguments(raw: Any) -> Any:
    """beforeMCPExecution sends the arguments as a JSON string."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return {"input": raw}
    return raw


def file_path(data: Mapping[str, Any]) -> Any:
    return first(data, "file_path", "path", "target_file", "target_notebook")


def first(data: Mapping[str, Any], *names: str) -> Any:
    return next((data[name] for name in names if name in data), None)


ADAPTER = CursorAdapter()
