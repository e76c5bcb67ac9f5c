"""Codex CLI's command hooks: its payload, its tool names and its answers.

Codex runs `PreToolUse` before shell commands (tool `Bash`), `apply_patch` edits and MCP tools
(`mcp__server__tool`). Codex lets a call through when a hook fails: a crash, an exit code other
than 0 and 2, a timeout, JSON it cannot read, and any decision it does not support ("ask", or
"allow" without updatedInput). So this adapter never answers with those: a call is allowed by
printing nothing, and refused with the documented deny
(`hookSpecificOutput.permissionDecision: "deny"`, exit 0), or with exit 2 and the reason on
stderr when the input cannot even be read. `ask` is a deny here: Codex has no prompt a hook
can hand a call to, and the daemon waits for an approver of its own.

`apply_patch` carries the raw `*** Begin Patch` text, also when the model runs it through the
shell (`apply_patch <<'EOF'`). It is parsed into the files it touches (codex_patch.py), each
mapped to `write_to_file` with its new text (deleting: `rm`), so each is held to the intent's
scope. A patch that cannot be parsed is refused.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import TYPE_CHECKING, Any

from intentd.daemon.agents.hooks import codex_patch
from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    EventKind,
    HookEvent,
    HookInputError,
    Mapped,
    Reply,
    text_field,
)
from intentd.daemon.agents.hooks.handshake import INTENTS_FILE
from intentd.daemon.agents.hooks.mapping import (
    MCP_PREFIX,
    mcp_call,
    read_file,
    shell_call,
    unknown_tool,
    write_file,
)

if TYPE_CHECKING:
    from intentd.daemon.agents.hooks.install import Installer

EVENTS: dict[str, EventKind] = {
    "PreToolUse": "pre_tool", "PostToolUse": "post_tool", "SessionStart": "session_start",
    "SessionEnd": "session_end"}
# PermissionRequest runs only when Codex itself would ask the person (to leave its sandbox):
# PreToolUse has already gated that call, so Codex's own prompt decides ("other").
SHELL_TOOLS = frozenset({"Bash", "shell", "shell_command", "exec_command", "local_shell",
                         "container.exec", "unified_exec"})
PATCH_TOOL = "apply_patch"
# Tools that only talk to the model, the person or sub-agents (whose own tool calls come
# through these hooks): intentd has no say.
NEUTRAL_TOOLS = frozenset({
    "update_plan", "request_user_input", "get_goal", "create_goal", "update_goal",
    "tool_search", "list_mcp_resources", "list_mcp_resource_templates", "spawn_agent", "Agent",
    "send_input", "wait", "wait_agent", "close_agent", "resume_agent"})
_EXIT_CODE = re.compile(r"\A(?:Wall time: [^\n]*\nOutput:\n)?Exit code: (-?\d+)\b")
MAX_PATCH_FILES = 50
_SED_RANGE = re.compile(r"\A\d+(,\d+)?p\Z")


class CodexAdapter(Adapter):
    name = "codex"
    label = "Codex CLI"
    hook_timeout = 600.0   # Codex's default; install sets a shorter one (HOOK_TIMEOUT)
    select_hint = ("In Codex, select an intent by running the shell command "
                   "`intentd hook select <INTENT_ID>`.")
    shell_tool = "shell (exec_command)"

    def installer(self) -> Installer:
        from intentd.daemon.agents.hooks.codex_install import INSTALLER
        return INSTALLER

    def event(self, hook_event: str | None, payload: Any) -> HookEvent:
        if not isinstance(payload, dict):
            raise HookInputError("the hook input is not a JSON object")
        name = payload.get("hook_event_name") or hook_event
        if not isinstance(name, str) or not name:
            raise HookInputError("the hook input names no hook_event_name")
        kind = EVENTS.get(name, "other")
        session = payload.get("session_id")
        if kind != "other" and (not isinstance(session, str) or not session):
            raise HookInputError("the hook input has no session_id")
        tool_input = payload.get("tool_input")
        if kind in ("pre_tool", "post_tool") and not isinstance(tool_input, dict):
            raise HookInputError("the hook input's tool_input is not an object")
        response = payload.get("tool_response")
        cwd = text_field(payload, "cwd")
        return HookEvent(
            kind=kind, name=name, session_key=str(session or ""), cwd=cwd,
            workspace=project_root(cwd), tool_name=str(payload.get("tool_name") or ""),
            tool_input=tool_input, call_key=str(payload.get("tool_use_id") or ""),
            ok=succeeded(response), output=as_text(response), payload=payload)

    def map_tool(self, tool_name: str, tool_input: Any, cwd: str | None) -> Mapped:
        data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
        if tool_name == PATCH_TOOL:
            return patch_call(data.get("command", data.get("input")), cwd)
        if tool_name in SHELL_TOOLS:
            command = data.get("command", data.get("cmd"))
            if isinstance(command, list) and all(isinstance(w, str) for w in command):
                if len(command) == 2 and command[0] in codex_patch.PATCH_PROGRAMS:
                    return patch_call(command[1], cwd)  # an argv `apply_patch PATCH`
                command = shell_script(command)
            if isinstance(command, str):
                try:
                    found = codex_patch.shell_patch(command)
                except codex_patch.PatchError as exc:
                    raise HookInputError(str(exc)) from None
                if found is not None:
                    patch, folder = found
                    return patch_call(patch, _join(cwd, folder) if folder else cwd)
                files = read_command(command)
                if files:
                    reads = [read_file(_join(cwd, name)) for name in files]
                    return Mapped(reads[0].tool, reads[0].args, read_only=True,
                                  more=tuple(reads[1:]))
            return shell_call(command, cwd)
        if tool_name.startswith(MCP_PREFIX):
            return mcp_call(tool_name, data)
        if tool_name in NEUTRAL_TOOLS:
            return Mapped(None)
        if tool_name == "view_image" and isinstance(data.get("path"), str):
            return read_file(_join(cwd, data["path"]))
        return unknown_tool(self.name, tool_name, tool_input)

    def turn(self, event: HookEvent) -> str | None:
        return text_field(event.payload, "turn_id")  # one per prompt of the person's

    def allow(self, event: HookEvent, reason: str, context: str | None = None) -> Reply:
        # Printing nothing lets the call run: "allow" without updatedInput is a failed hook
        # in Codex's eyes. Context (an intent just selected) may go with no decision at all.
        if context and event.kind == "pre_tool":
            return Reply.json({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                      "additionalContext": context}})
        return Reply()

    def deny(self, event: HookEvent | None, reason: str) -> Reply:
        if event is not None and event.kind == "pre_tool":
            return Reply.json({"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": reason}})
        if event is not None and event.name == "PermissionRequest":
            return Reply.json({"hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": reason}}})
        # the input could not be read (or another event): exit 2 with the reason blocks
        # PreToolUse and denies PermissionRequest, whichever event this was
        return Reply(stderr=_one_line(reason) + "\n", exit_code=2)

    def context(self, event: HookEvent, text: str) -> Reply:
        name = {"session_start": "SessionStart", "post_tool": "PostToolUse",
                "pre_tool": "PreToolUse"}.get(event.kind)
        if name is None:
            return Reply()
        return Reply.json({"hookSpecificOutput": {"hookEventName": name,
                                                  "additionalContext": text}})


# Folders a shell named by its full path may come from, for `bash -lc SCRIPT` to be read as SCRIPT.
# (/usr/local/bin and /opt/homebrew/bin belong to the user on Homebrew Macs: an agent able to
# replace a shell there could replace any program on PATH, the bare `bash` included.)
SYSTEM_BIN = ("/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin", "/run/current-system/sw/bin")


def shell_script(argv: list[str]) -> str:
    """An argv as one command line; `bash -lc SCRIPT` (older shell tools) is its script.

    Only a system shell is seen through: a bare name, or a full path in a system folder. A
    `./bash` or `src/zsh` is a program the agent may have written, which runs whatever it
    likes: it stays the command, and the policy refuses a program given by a path."""
    if len(argv) == 3 and argv[1] in ("-lc", "-c"):
        folder, name = os.path.split(argv[0])
        if name in ("bash", "sh", "zsh") and (not folder or folder in SYSTEM_BIN):
            return argv[2]
    return shlex.join(argv)


def project_root(cwd: str | None) -> str | None:
    """The workspace a call belongs to: the nearest folder at or above `cwd` with an intents
    file. Codex's `cwd` is the command's own folder (a model may run a command in a sub-folder,
    `workdir`), which must not become the session's workspace."""
    if not cwd or not os.path.isabs(cwd):
        return None
    folder = os.path.normpath(cwd)
    while True:
        if os.path.isfile(os.path.join(folder, INTENTS_FILE)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def read_command(command: str) -> list[str] | None:
    """The files of a plain read Codex's model runs to look at files (`cat F`, `sed -n 1,80p F`,
    `nl -ba F`, `head -n 40 F`, `tail F`), judged as reads of those files: the pipeline then
    records what the session has read, which its stale-file check asks of a later edit. Any
    other word (a pipe, a redirect, a variable, a glob, an option not listed) and it stays an
    ordinary command."""
    if any(c in command for c in "|&;<>$`*?[{~\n\\"):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    program, rest = words[0], words[1:]
    if program == "cat":
        files = rest[1:] if rest[:1] == ["--"] else rest
    elif program == "sed" and len(rest) >= 3 and rest[0] == "-n" and _SED_RANGE.match(rest[1]):
        files = rest[2:]
    elif program == "nl" and rest[:1] == ["-ba"]:
        files = rest[1:]
    elif program in ("head", "tail") and len(rest) >= 3 and rest[0] == "-n" \
            and rest[1].lstrip("+-").isdigit():
        files = rest[2:]
    elif program in ("head", "tail"):
        files = rest
    else:
        return None
    if not files or any(name.startswith("-") for name in files):
        return None
    return files


def patch_call(text: Any, cwd: str | None) -> Mapped:
    """One apply_patch as pipeline calls: each file written with its new text, or removed."""
    if not isinstance(text, str) or not text.strip():
        raise HookInputError("apply_patch: the call carries no patch text")
    try:
        files = codex_patch.changes(text, cwd or os.getcwd())
    except codex_patch.PatchError as exc:
        raise HookInputError(f"apply_patch: {exc}") from None
    if len(files) > MAX_PATCH_FILES:
        raise HookInputError(f"apply_patch: the patch touches {len(files)} files (at most "
                             f"{MAX_PATCH_FILES} in one call)")
    calls = [file_call(change, cwd) for change in files]
    # one tool call, several pipeline calls: the core gates each, and refuses the whole patch
    # when one of them is refused
    return Mapped(calls[0].tool, calls[0].args, more=tuple(calls[1:]))


def file_call(change: codex_patch.FileChange, cwd: str | None) -> Mapped:
    path = _join(cwd, change.path)
    if change.content is not None:
        return write_file(path, change.content)
    args: dict[str, Any] = {"command": f"rm -- {shlex.quote(change.path)}"}
    if cwd:
        args["cwd"] = cwd
    return Mapped("execute_command", args)


def _join(cwd: str | None, path: str) -> str:
    return os.path.join(cwd, path) if cwd and not os.path.isabs(path) else path


def succeeded(response: Any) -> bool:
    """Codex's tool_response: the output text (for a patch it starts "Exit code: N"), or an
    object in other versions. A shell command's exit status is not in it: taken as success."""
    if isinstance(response, str):
        match = _EXIT_CODE.match(response)
        return match is None or match.group(1) == "0"
    if isinstance(response, dict):
        code = response.get("exit_code", response.get("exitCode"))
        return not (response.get("success") is False or response.get("error")
                    or (isinstance(code, int) and code != 0))
    return True


def as_text(response: Any) -> str:
    if isinstance(response, str):
        return response
    return json.dumps(response, default=str)


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "intentd refused this call"


ADAPTER = CodexAdapter()
