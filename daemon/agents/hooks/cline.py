"""Cline's hook files: its payload, its tool names and its `{cancel, ...}` answers.

Cline runs an executable file named after the event (`PreToolUse`, `PostToolUse`,
`TaskStart`, ...) from `.clinerules/hooks/` or the global hooks folder, with one JSON object
on stdin, and reads one JSON object from stdout: `{"cancel", "contextModification",
"errorMessage"}`. Two hosts send it:

- Cline CLI 3 (and the SDK it is built on): `hookName` is the SDK's event (`tool_call`,
  `tool_result`, `agent_start`, ...), the call is in `tool_call` / `tool_result` with its
  real input and id, and again in `preToolUse` / `postToolUse` with every parameter a string.
- The VS Code extension: `hookName` is the file's name (`PreToolUse`), only `preToolUse` /
  `postToolUse`, parameters as strings (non-strings JSON-encoded).

Cline lets a call through when a hook fails: a timeout, a crash, stdout that is not JSON.
Exit codes are ignored. So every answer here is explicit JSON, and the installed file prints
a refusal itself when intentd cannot answer at all. `cancel: true` stops the whole task
(Cline's documented meaning; the person resumes it), so a refusal is that; a context only
reaches the model from a tool hook that does not cancel (`contextModification`, shown to the
model on its next request). There is no prompt of Cline's a hook can hand a call to: `ask`
is a refusal, and the daemon waits for an approver of its own.

Tool names: the SDK's (`read_files`, `editor`, `apply_patch`, `run_commands`,
`search_codebase`, `fetch_web_content`, MCP tools `server__tool`) and the older extension's
(`read_file`, `write_to_file`, `replace_in_file`, `execute_command`, `use_mcp_tool`, ...).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    EventKind,
    HookEvent,
    HookInputError,
    Mapped,
    Reply,
)
from intentd.daemon.agents.hooks.codex import patch_call
from intentd.daemon.agents.hooks.mapping import (
    MCP_PREFIX,
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

# The file's name (the VS Code extension's hookName) and the SDK's hookName, per kind.
EVENTS: dict[str, EventKind] = {
    "PreToolUse": "pre_tool", "tool_call": "pre_tool",
    "PostToolUse": "post_tool", "tool_result": "post_tool",
    "TaskStart": "session_start", "agent_start": "session_start",
    "TaskResume": "session_start", "agent_resume": "session_start",
}
# Tools that only talk to the model or the person, or start a sub-agent whose own tool calls
# come through these hooks (checked with Cline CLI 3.0.65): intentd has no say.
NEUTRAL_TOOLS = frozenset({
    "ask_question", "submit_and_exit", "skills", "spawn_agent",
    "ask_followup_question", "attempt_completion", "plan_mode_respond", "act_mode_respond",
    "focus_chain", "condense", "summarize_task", "load_mcp_documentation", "new_task",
    "use_skill"})
# The SDK's names (Cline CLI 3): it kills a tool hook after 120 s; the VS Code extension,
# which sends the file's name, after 30 s. Either way the call then runs.
SDK_EVENTS = frozenset({"tool_call", "tool_result", "agent_start", "agent_resume"})
CLI_TIMEOUT, EXTENSION_TIMEOUT = 120.0, 30.0
# Values the VS Code extension JSON-encodes into a string parameter, per tool.
STRUCTURED = {"read_files": ("files", "file_paths", "paths"), "run_commands": ("commands",),
              "search_codebase": ("queries",), "fetch_web_content": ("requests",),
              "editor": ("insert_line",)}
MAX_CALLS = 50     # pipeline calls one tool call may make (files read, commands run)
_DIFF_BLOCK = re.compile(
    r"^[-<]{3,} SEARCH>?\n(?P<old>.*?)^={3,}\n(?P<new>.*?)^[+>]{3,} REPLACE>?$",
    re.DOTALL | re.MULTILINE)


class ClineAdapter(Adapter):
    name = "cline"
    label = "Cline"
    hook_timeout = EXTENSION_TIMEOUT  # until the payload says which Cline sent it
    # Cline reads no context from TaskStart any more (CLI 3 runs it detached, the extension
    # keeps only its cancel): the handshake rides on the first tool call that goes on.
    handshake_in_tool_context = True
    select_hint = ("In Cline, select an intent by running the command "
                   "`intentd hook select <INTENT_ID>` (run_commands / execute_command) on its "
                   "own, then try again.")
    shell_tool = "run_commands"

    def installer(self) -> Installer:
        from intentd.daemon.agents.hooks.cline_install import INSTALLER

        return INSTALLER

    def event(self, hook_event: str | None, payload: Any) -> HookEvent:
        if not isinstance(payload, dict):
            raise HookInputError("the hook input is not a JSON object")
        name = payload.get("hookName") or hook_event
        if not isinstance(name, str) or not name:
            raise HookInputError("the hook input names no hookName")
        kind = event_kind(name, hook_event)
        session = session_key(payload)
        if kind != "other" and not session:
            raise HookInputError("the hook input names no taskId")
        # Cline runs a hook in the folder it runs its tools in (CLI 3: its own cwd, which may
        # be below the workspace root the payload names).
        cwd, root = os.getcwd(), workspace_root(payload)
        timeout = CLI_TIMEOUT if name in SDK_EVENTS else EXTENSION_TIMEOUT
        if kind not in ("pre_tool", "post_tool"):
            return HookEvent(kind=kind, name=name, session_key=session, cwd=cwd,
                             workspace=root, hook_timeout=timeout, payload=payload)
        tool_name, tool_input, call_id = tool_of(payload, kind)
        ok, output = result_of(payload) if kind == "post_tool" else (True, "")
        return HookEvent(kind=kind, name=name, session_key=session, cwd=cwd, workspace=root,
                         tool_name=tool_name, tool_input=tool_input, call_key=call_id, ok=ok,
                         output=output, hook_timeout=timeout, payload=payload)

    def map_tool(self, tool_name: str, tool_input: Any, cwd: str | None) -> Mapped:
        if tool_name in NEUTRAL_TOOLS:
            return Mapped(None)
        mapper = _MAPPERS.get(tool_name)
        if mapper is not None:
            return mapper(tool_input, cwd)
        if tool_name.startswith(MCP_PREFIX):
            return mcp_call(tool_name, tool_input)
        if "__" in tool_name.strip("_"):  # the SDK names an MCP tool `server__tool`
            return mcp_call(f"{MCP_PREFIX}{tool_name}", tool_input)
        return unknown_tool(self.name, tool_name, tool_input)

    def allow(self, event: HookEvent, reason: str, context: str | None = None) -> Reply:
        return self.context(event, context) if context else self.no_opinion(event)

    def deny(self, event: HookEvent | None, reason: str) -> Reply:
        # Stops the task: Cline has no way to refuse one call and go on (its documented cancel).
        return Reply.json({"cancel": True, "contextModification": "", "errorMessage": reason})

    def no_opinion(self, event: HookEvent | None) -> Reply:
        return Reply.json({"cancel": False})  # explicit: no JSON at all is read as "go on" too

    def context(self, event: HookEvent, text: str) -> Reply:
        return Reply.json({"cancel": False, "contextModification": text})


def event_kind(name: str, hook_event: str | None) -> EventKind:
    """The payload's event, checked against the file Cline ran (the EVENT word of the hook's
    command line). A name this adapter does not know is taken from the file: a renamed event
    is still gated."""
    kind = EVENTS.get(name, "other")
    if hook_event is None:
        return kind
    expected = EVENTS.get(hook_event, "other")
    if kind == "other":
        return expected
    if expected != "other" and expected != kind:
        raise HookInputError(f"the {hook_event} hook was sent a {name} event")
    return kind


def session_key(payload: dict[str, Any]) -> str:
    """The CLI's session (a sub-agent shares its parent's), else the task."""
    session = payload.get("sessionContext")
    if isinstance(session, dict) and isinstance(session.get("rootSessionId"), str) \
            and session["rootSessionId"]:
        return str(session["rootSessionId"])
    task = payload.get("taskId")
    return task if isinstance(task, str) else ""


def workspace_root(payload: dict[str, Any]) -> str | None:
    """The first workspace root: Cline runs tools from there, and resolves relative paths."""
    roots = payload.get("workspaceRoots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    info = payload.get("workspaceInfo")
    if isinstance(info, dict) and isinstance(info.get("rootPath"), str) and info["rootPath"]:
        return str(info["rootPath"])
    return None


def tool_of(payload: dict[str, Any], kind: EventKind) -> tuple[str, Any, str]:
    """The tool's name, its input as the tool gets it, and the call's id ("" when none)."""
    sdk = payload.get("tool_call" if kind == "pre_tool" else "tool_result")
    if isinstance(sdk, dict) and isinstance(sdk.get("name"), str) and sdk["name"]:
        return sdk["name"], sdk.get("input"), str(sdk.get("id") or "")
    block = payload.get("preToolUse" if kind == "pre_tool" else "postToolUse")
    if not isinstance(block, dict):
        raise HookInputError("the hook input has no preToolUse / postToolUse")
    name = block.get("toolName", block.get("tool"))  # older docs spell it `tool`
    if not isinstance(name, str) or not name:
        raise HookInputError("the hook input names no toolName")
    parameters = block.get("parameters")
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise HookInputError("the hook input's parameters are not an object")
    return name, decoded(name, parameters), ""


def decoded(tool: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """The extension's string parameters with the values it JSON-encoded decoded again."""
    data = dict(parameters)
    for key in STRUCTURED.get(tool, ()):
        value = data.get(key)
        if isinstance(value, str):
            try:
                data[key] = json.loads(value)
            except ValueError:
                pass  # a plain string, as sent
    return data


def result_of(payload: dict[str, Any]) -> tuple[bool, str]:
    """Whether the tool succeeded, and its output as text. Cline's tools report a failed file
    or command inside a successful result (`success: false` per item), so those count too."""
    block = payload.get("postToolUse")
    block = block if isinstance(block, dict) else {}
    record = payload.get("tool_result")
    record = record if isinstance(record, dict) else {}
    ok = block.get("success") is not False and not record.get("error")
    output: Any = record.get("output", block.get("result", ""))
    items = output if isinstance(output, list) else [output]
    if any(isinstance(item, dict) and item.get("success") is False for item in items):
        ok = False
    text = output if isinstance(output, str) else json.dumps(output, default=str)
    return ok, text


def _join(cwd: str | None, path: str) -> str:
    return os.path.join(cwd, path) if cwd and not os.path.isabs(path) else path


def _calls(calls: list[Mapped]) -> Mapped:
    if not calls:
        raise HookInputError("the call names nothing to act on")
    if len(calls) > MAX_CALLS:
        raise HookInputError(f"one call of {len(calls)} parts (at most {MAX_CALLS})")
    return Mapped(calls[0].tool, calls[0].args, calls[0].read_only, more=tuple(calls[1:]))


# --- the SDK's tools (Cline CLI 3, the VS Code extension 4) --------------------------------

def _read_files(data: Any, cwd: str | None) -> Mapped:
    """Every path of every form read_files accepts (a string, a list, {files|paths|file_paths})."""
    return _calls([read_file(_join(cwd, path)) for path in read_paths(data)])


def read_paths(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, list):
        return [path for item in data for path in read_paths(item)]
    if not isinstance(data, dict):
        raise HookInputError("read_files: the input is not a path, a list or an object")
    for key in ("files", "paths", "file_paths"):
        if key in data:
            return read_paths(data[key])
    for key in ("path", "file_path", "filePath"):
        if isinstance(data.get(key), str):
            return [data[key]]
    raise HookInputError("read_files: no path in the input")


def _search_codebase(data: Any, cwd: str | None) -> Mapped:
    """Each regex searched over the workspace by Cline's own search (not intentd's)."""
    queries = data.get("queries") if isinstance(data, dict) else data
    if isinstance(queries, str):
        queries = [queries]
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise HookInputError("search_codebase: the queries are not strings")
    return _calls([ripgrep_call(query, cwd or ".", cwd) for query in queries])


def _run_commands(data: Any, cwd: str | None) -> Mapped:
    """Each command as its own call (Cline runs them side by side, each from the workspace
    root). `intentd hook select ID` counts only as the one command of its call."""
    commands = run_commands_of(data)
    if len(commands) == 1:
        return shell_call(commands[0], cwd)
    calls = [shell_call(command, cwd) for command in commands]
    if any(call.select is not None for call in calls):
        raise HookInputError("run_commands: `intentd hook select` must be the only command of "
                             "its call")
    if any("<<" in command for command in commands):
        # Cline joins a heredoc split over several entries back into one command: judged
        # both as that one command and entry by entry
        calls.append(shell_call("\n".join(commands), cwd))
    return _calls(calls)


def run_commands_of(data: Any) -> list[str]:
    """The command lines of every form run_commands accepts; `{command, args}` runs the
    program without a shell, judged as the quoted command line it amounts to."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, list):
        return [line for item in data for line in run_commands_of(item)]
    if not isinstance(data, dict):
        raise HookInputError("run_commands: the input is not a command, a list or an object")
    if "commands" in data:
        return run_commands_of(data["commands"])
    command = data.get("command", data.get("cmd"))
    if not isinstance(command, str) or not command:
        raise HookInputError("run_commands: no command in the input")
    args = data.get("args")
    if args is None or "command" not in data:
        return [command]
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise HookInputError("run_commands: args are not strings")
    return [shlex.join([command, *args])]


def _editor(data: Any, cwd: str | None) -> Mapped:
    """Cline's editor: insert at a line, create a missing file, or replace one exact text."""
    if not isinstance(data, dict) or not isinstance(data.get("path"), str) or not data["path"]:
        raise HookInputError("editor: no path")
    new = data.get("new_text")
    if not isinstance(new, str):
        raise HookInputError("editor: new_text is not a string")
    path = _join(cwd, data["path"])  # relative with no cwd: the hook runs in the root
    line = data.get("insert_line")
    if line is not None:
        return write_file(path, inserted(path, line, new))
    if not os.path.lexists(path):
        return write_file(path, new)
    old = data.get("old_text")
    if not isinstance(old, str) or not old:
        raise HookInputError("editor: old_text is needed to edit an existing file")
    eol = _eol(path)
    return replace(path, _with_eol(old, eol), _with_eol(new, eol))


def inserted(path: str, line: Any, text: str) -> str:
    """The file's text with `text` inserted before one-based `line` (as Cline's editor does)."""
    try:
        number = int(line)
        with open(path, encoding="utf-8", newline="") as handle:
            content = handle.read()
    except (TypeError, ValueError, OSError) as exc:
        raise HookInputError(f"editor: cannot insert into {path}: {exc}") from None
    eol = "\r\n" if "\r\n" in content else "\n"
    lines = re.split(r"\r\n|\n", content)
    if not 1 <= number <= len(lines) + 1:
        raise HookInputError(f"editor: insert_line {number} is outside {path}")
    lines[number - 1:number - 1] = re.split(r"\r\n|\n", text)
    return eol.join(lines)


def _eol(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return "\r\n" if b"\r\n" in handle.read(1 << 20) else "\n"
    except OSError:
        return "\n"


def _with_eol(text: str, eol: str) -> str:
    return eol.join(re.split(r"\r\n|\n", text))


def _apply_patch(data: Any, cwd: str | None) -> Mapped:
    text = data.get("input") if isinstance(data, dict) else data
    return patch_call(text, cwd)


def _web(name: str) -> Callable[[Any, str | None], Mapped]:
    """Web access is not a workspace read: judged like another server's tool."""
    def mapper(data: Any, cwd: str | None) -> Mapped:
        return unknown_tool("cline", name, data)
    return mapper


# --- the older extension's tools ------------------------------------------------------------

def _execute_command(data: Any, cwd: str | None) -> Mapped:
    command = data.get("command") if isinstance(data, dict) else None
    return shell_call(command, cwd)


def _read_file(data: Any, cwd: str | None) -> Mapped:
    return read_file(_join(cwd, _path(data, "read_file")))


def _write_to_file(data: Any, cwd: str | None) -> Mapped:
    content = data.get("content") if isinstance(data, dict) else None
    return write_file(_join(cwd, _path(data, "write_to_file")), content)


def _replace_in_file(data: Any, cwd: str | None) -> Mapped:
    """The SEARCH/REPLACE blocks of `diff`, each an exact replacement."""
    path = _join(cwd, _path(data, "replace_in_file"))
    diff = data.get("diff") if isinstance(data, dict) else None
    if not isinstance(diff, str):
        raise HookInputError("replace_in_file: no diff")
    blocks = [(m.group("old")[:-1] if m.group("old") else "", m.group("new")[:-1]
               if m.group("new") else "") for m in _DIFF_BLOCK.finditer(diff)]
    if not blocks or any(not old for old, _ in blocks):
        raise HookInputError("replace_in_file: the diff has no SEARCH/REPLACE block intentd can "
                             "read")
    if len(blocks) == 1:
        return replace(path, *blocks[0])
    return Mapped("replace_in_file", {"path": path, "edits": [
        {"old_str": old, "new_str": new} for old, new in blocks]})


def _list_files(data: Any, cwd: str | None) -> Mapped:
    recursive = isinstance(data, dict) and str(data.get("recursive")).lower() == "true"
    return list_files(_join(cwd, _path(data, "list_files")), recursive)


def _search_files(data: Any, cwd: str | None) -> Mapped:
    regex = data.get("regex") if isinstance(data, dict) else None
    return ripgrep_call(regex, _join(cwd, _path(data, "search_files")), cwd)


def _use_mcp_tool(data: Any, cwd: str | None) -> Mapped:
    if not isinstance(data, dict) or not isinstance(data.get("server_name"), str) \
            or not isinstance(data.get("tool_name"), str):
        raise HookInputError("use_mcp_tool: no server_name or tool_name")
    arguments = data.get("arguments")
    if isinstance(arguments, str):  # the model writes them as JSON text
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    return mcp_call(f"{MCP_PREFIX}{data['server_name']}__{data['tool_name']}",
                    arguments if isinstance(arguments, dict) else {"arguments": arguments})


def _path(data: Any, tool: str) -> str:
    path = data.get("path") if isinstance(data, dict) else None
    if not isinstance(path, str) or not path:
        raise HookInputError(f"{tool}: no path")
    return path


_MAPPERS: dict[str, Callable[[Any, str | None], Mapped]] = {
    "read_files": _read_files, "search_codebase": _search_codebase,
    "run_commands": _run_commands, "editor": _editor, "apply_patch": _apply_patch,
    "fetch_web_content": _web("fetch_web_content"),
    "execute_command": _execute_command, "read_file": _read_file,
    "write_to_file": _write_to_file, "new_rule": _write_to_file,
    "replace_in_file": _replace_in_file, "list_files": _list_files,
    "search_files": _search_files, "use_mcp_tool": _use_mcp_tool,
    "web_fetch": _web("web_fetch"), "web_search": _web("web_search"),
    "browser_action": _web("browser_action"),
}

ADAPTER = ClineAdapter()
