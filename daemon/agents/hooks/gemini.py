"""Gemini CLI's command hooks: its payload, its tool names and its answers.

Gemini CLI runs `BeforeTool` before every tool (`run_shell_command`, `write_file`, `replace`,
`read_file`, `glob`, `grep_search`, `list_directory`, MCP tools `mcp_<server>_<tool>`, ...) and
`AfterTool` after it; the payloads carry no call id, so a call is paired with its report by its
name and arguments. Gemini lets a call through when a hook fails: a timeout, a crash, an exit
code other than 0 and 2, exit 2 with nothing on stdout or stderr, or plain text on stdout
with exit 0. So a refusal here is always the documented JSON deny (`{"decision": "deny",
"reason": ...}`) together with exit 2 and the reason on stderr: either one alone blocks.

`ask` is a deny: Gemini's `"decision": "ask"` (in its source, not its docs) forces its own
confirmation, which a headless run (`gemini -p`) waits on forever. The daemon waits for an
approver of its own instead.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    EventKind,
    HookEvent,
    HookInputError,
    Mapped,
    Reply,
    text_field,
)
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

EVENTS: dict[str, EventKind] = {
    "BeforeTool": "pre_tool", "AfterTool": "post_tool", "SessionStart": "session_start",
    "SessionEnd": "session_end"}
GEMINI_MCP_PREFIX = "mcp_"   # Gemini's name for an MCP tool: mcp_<server>_<tool>
SHELL_TOOL = "run_shell_command"
SEARCH_TOOLS = frozenset({"grep_search", "search_file_content"})  # the second: its old name
# Tools that only talk to the model, the person or sub-agents (whose own tool calls come
# through these hooks, from the same scheduler): intentd has no say.
NEUTRAL_TOOLS = frozenset({
    "write_todos", "ask_user", "activate_skill", "get_internal_docs", "enter_plan_mode",
    "exit_plan_mode", "update_topic", "complete_task", "tracker_create_task",
    "tracker_update_task", "tracker_get_task", "tracker_list_tasks", "tracker_add_dependency",
    "tracker_visualize", "list_mcp_resources", "invoke_agent", "codebase_investigator",
    "cli_help", "generalist"})
MAX_READ_MANY = 50
_GLOB_CHARS = re.compile(r"[*?\[{]")
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE)


class GeminiAdapter(Adapter):
    name = "gemini"
    label = "Gemini CLI"
    hook_timeout = 60.0    # Gemini's default (60000 ms); install sets a longer one
    project_dir_env = ("GEMINI_PROJECT_DIR",)
    select_hint = ("In Gemini CLI, select an intent by running the shell command "
                   "`intentd hook select <INTENT_ID>` (run_shell_command).")
    shell_tool = SHELL_TOOL

    def installer(self) -> Installer:
        from intentd.daemon.agents.hooks.gemini_install import INSTALLER
        return INSTALLER

    def event(self, hook_event: str | None, payload: Any) -> HookEvent:
        if not isinstance(payload, dict):
            raise HookInputError("the hook input is not a JSON object")
        name = payload.get("hook_event_name") or hook_event
        if not isinstance(name, str) or not name:
            raise HookInputError("the hook input names no hook_event_name")
        kind = EVENTS.get(name, "other")
        session = payload.get("session_id") or os.environ.get("GEMINI_SESSION_ID")
        if kind != "other" and (not isinstance(session, str) or not session):
            raise HookInputError("the hook input has no session_id")
        tool_input = payload.get("tool_input")
        if kind in ("pre_tool", "post_tool") and not isinstance(tool_input, dict):
            raise HookInputError("the hook input's tool_input is not an object")
        tool_name = payload.get("tool_name")
        if kind in ("pre_tool", "post_tool") and (not isinstance(tool_name, str) or not tool_name):
            raise HookInputError("the hook input names no tool_name")
        response = payload.get("tool_response")
        return HookEvent(
            kind=kind, name=name, session_key=str(session or ""),
            cwd=text_field(payload, "cwd"),
            tool_name=qualified_name(str(tool_name or ""), payload.get("mcp_context")),
            tool_input=tool_input, ok=succeeded(str(tool_name or ""), response),
            output=as_text(response), payload=payload)

    def map_tool(self, tool_name: str, tool_input: Any, cwd: str | None) -> Mapped:
        data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
        if tool_name == SHELL_TOOL:
            return shell_call(data.get("command"), folder(cwd, _first(data, "dir_path",
                                                                        "directory")))
        if tool_name == "read_file":
            return read_file(_join(cwd, _first(data, "file_path", "absolute_path", "path")))
        if tool_name == "write_file":
            return write_file(_join(cwd, _first(data, "file_path", "path")), data.get("content"))
        if tool_name == "replace":
            return replace_call(_join(cwd, _first(data, "file_path", "path")), data)
        if tool_name == "list_directory":
            return list_files(_join(cwd, _first(data, "dir_path", "path")) or cwd or ".")
        if tool_name == "glob":
            return glob_call(data, cwd)
        if tool_name in SEARCH_TOOLS:
            return ripgrep_call(data.get("pattern"), _first(data, "dir_path", "path"), cwd)
        if tool_name == "read_many_files":
            return read_many(data.get("include", data.get("paths")), cwd)
        if tool_name.startswith(MCP_PREFIX):
            return mcp_call(tool_name, data)
        if tool_name.startswith(GEMINI_MCP_PREFIX):
            return mcp_call(qualified_name(tool_name, None), data)
        if tool_name in NEUTRAL_TOOLS:
            return Mapped(None)
        # web_fetch, google_web_search, save_memory, discovered tools, custom sub-agents:
        # judged as another server's tool (an intent, auto_approve.mcp or a person)
        return unknown_tool(self.name, tool_name, tool_input)

    def allow(self, event: HookEvent, reason: str, context: str | None = None) -> Reply:
        # BeforeTool has no context of its own: a selection's context is what the select
        # command prints, which the model reads as the tool's output
        if event.kind == "pre_tool":
            return Reply.json({"decision": "allow"})
        return Reply()

    def deny(self, event: HookEvent | None, reason: str) -> Reply:
        line = _one_line(reason)
        if event is not None and event.kind != "pre_tool":
            # a report, a session event: there is nothing to block, only to tell
            return Reply.json({"systemMessage": line})
        # both conventions at once: the JSON deny, and exit 2 with the reason on stderr
        return Reply.json({"decision": "deny", "reason": line}, exit_code=2,
                          stderr=line + "\n")

    def context(self, event: HookEvent, text: str) -> Reply:
        name = {"session_start": "SessionStart", "post_tool": "AfterTool"}.get(event.kind)
        if name is None:
            return Reply()
        return Reply.json({"hookSpecificOutput": {"hookEventName": name,
                                                  "additionalContext": unbracketed(text)}})


def qualified_name(tool_name: str, mcp_context: Any) -> str:
    """An MCP tool in intentd's spelling, `mcp__<server>__<tool>`: from the payload's
    mcp_context when Gemini sends one (server names may hold `_`), else from Gemini's
    `mcp_<server>_<tool>` split at its first `_` (as Gemini itself parses it)."""
    if isinstance(mcp_context, dict):
        server, tool = mcp_context.get("server_name"), mcp_context.get("tool_name")
        if isinstance(server, str) and server and isinstance(tool, str) and tool:
            return f"{MCP_PREFIX}{server}__{tool}"
    if tool_name.startswith(GEMINI_MCP_PREFIX) and not tool_name.startswith(MCP_PREFIX):
        server, _, tool = tool_name[len(GEMINI_MCP_PREFIX):].partition("_")
        if server and tool:
            return f"{MCP_PREFIX}{server}__{tool}"
    return tool_name


def glob_call(data: dict[str, Any], cwd: str | None) -> Mapped:
    """`glob`: a recursive listing of its folder, or of the pattern's fixed part when that
    leaves the folder (`../**`, `/etc/**`): the listing judged is the one Gemini makes."""
    where = _join(cwd, _first(data, "dir_path", "path")) or cwd or "."
    pattern = data.get("pattern")
    if isinstance(pattern, str) and isinstance(where, str):
        wild = _GLOB_CHARS.search(pattern)
        fixed = os.path.dirname(pattern[:wild.start()] if wild else pattern)
        if fixed and (os.path.isabs(fixed) or ".." in fixed.split("/")):
            where = os.path.normpath(os.path.join(where, fixed))
    return list_files(where, recursive=True)


def replace_call(path: Any, data: dict[str, Any]) -> Mapped:
    """`replace`: one unique replacement maps as it is; every occurrence (allow_multiple), or a
    new file (an empty old_string), as the whole file it produces, so the person sees the diff."""
    old, new = data.get("old_string"), data.get("new_string")
    every = data.get("allow_multiple") is True or (
        isinstance(data.get("expected_replacements"), int) and data["expected_replacements"] > 1)
    if (old == "" or every) and isinstance(path, str) and isinstance(old, str) \
            and isinstance(new, str):
        after = replaced(path, old, new)
        if after is not None:
            return write_file(path, after)
    return replace(path, old, new)


def replaced(path: str, old: str, new: str) -> str | None:
    """The file's text after replacing every `old` (a new file when `old` is empty), or None
    when Gemini would refuse the edit (then the pipeline judges the edit as sent)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text: str | None = handle.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError):
        return None
    if old == "":
        return new if not text else None
    if text is None or old not in text:
        return None
    return text.replace(old, new)


def read_many(include: Any, cwd: str | None) -> Mapped:
    """`read_many_files`: a plain file is a read of it; a folder or a glob reads whatever is
    under its fixed part, judged as a search of that folder (ignore rules apply to it)."""
    if isinstance(include, str):
        include = [include]
    if not isinstance(include, list) or not include \
            or not all(isinstance(p, str) and p for p in include):
        raise HookInputError("read_many_files: `include` is not a list of paths")
    if len(include) > MAX_READ_MANY:
        raise HookInputError(f"read_many_files: {len(include)} paths (at most {MAX_READ_MANY} "
                             "in one call)")
    calls = [_read_one(pattern, cwd) for pattern in include]
    return Mapped(calls[0].tool, calls[0].args, read_only=True, more=tuple(calls[1:]))


def _read_one(pattern: str, cwd: str | None) -> Mapped:
    wild = _GLOB_CHARS.search(pattern)
    if wild is not None:
        base = os.path.dirname(pattern[:wild.start()]) or "."
        return ripgrep_call("", base, cwd)
    path = _join(cwd, pattern)
    if isinstance(path, str) and os.path.isdir(path if os.path.isabs(path)
                                               else os.path.join(os.getcwd(), path)):
        return ripgrep_call("", pattern, cwd)
    return read_file(path)


def folder(cwd: str | None, dir_path: Any) -> str | None:
    """Where a shell command runs: its dir_path (relative to the project), else the hook's cwd."""
    if not isinstance(dir_path, str) or not dir_path:
        return cwd
    joined = _join(cwd, dir_path)
    return joined if isinstance(joined, str) else cwd


def _first(data: dict[str, Any], *names: str) -> Any:
    for name in names:
        if data.get(name) is not None:
            return data[name]
    return None


def _join(cwd: str | None, path: Any) -> Any:
    if isinstance(path, str) and path and cwd and not os.path.isabs(path):
        return os.path.join(cwd, path)
    return path


def succeeded(tool_name: str, response: Any) -> bool:
    """AfterTool's tool_response is `{llmContent, returnDisplay, error?}`: an error means the
    tool failed; a shell command that exited non-zero says so in its llmContent."""
    if not isinstance(response, dict):
        return True
    if response.get("error"):
        return False
    if tool_name == SHELL_TOOL and isinstance(response.get("llmContent"), str):
        code = _EXIT_CODE.search(response["llmContent"])
        return code is None or code.group(1) == "0"
    return True


def as_text(response: Any) -> str:
    """The tool's output as the model saw it: llmContent's text (parts joined), else JSON."""
    if isinstance(response, dict):
        content = response.get("llmContent")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "".join(p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str)
                           else (p if isinstance(p, str) else "") for p in content)
        else:
            text = json.dumps(content, default=str) if content is not None else ""
        error = response.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            text = f"{text}\n{message}" if text else str(message)
        return text
    if isinstance(response, str):
        return response
    return json.dumps(response, default=str) if response is not None else ""


def unbracketed(text: str) -> str:
    """Gemini turns every < and > of hook context into &lt; and &gt; before the model reads
    it: `<INTENT_ID>` is written INTENT_ID, and other brackets as look-alikes."""
    return text.replace("<INTENT_ID>", "INTENT_ID").replace("<", "\u2039").replace(">", "\u203a")


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "intentd refused this call"


ADAPTER = GeminiAdapter()
