"""Cursor hook inputs, shaped as Cursor's hooks documentation shows them (cursor.com/docs/hooks).

Common fields on every event, then each event's own. A change on Cursor's side to these shapes
should make tests/agents/test_cursor_hook.py fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CONVERSATION = "668320d2-2fd8-4888-b33c-2a466fec86e7"


def common(event: str, ws: Path) -> dict[str, Any]:
    return {"conversation_id": CONVERSATION, "generation_id": "490b90b7-a2ce-4c2c-bb76-cb77b125df2f",
            "model": "claude-sonnet-4-5", "hook_event_name": event, "cursor_version": "2.1.40",
            "workspace_roots": [str(ws)], "user_email": "person@example.com",
            "transcript_path": f"/home/person/.cursor/projects/p/agent-transcripts/{CONVERSATION}.txt"}


def pre_tool_use(ws: Path, tool: str, tool_input: dict[str, Any],
                 use_id: str = "toolu_01") -> dict[str, Any]:
    """preToolUse: the docs' example is Shell with {"command", "working_directory"}."""
    return {**common("preToolUse", ws), "tool_name": tool, "tool_input": tool_input,
            "tool_use_id": use_id, "cwd": str(ws), "agent_message": "Working on it"}


def post_tool_use(ws: Path, tool: str, tool_input: dict[str, Any], output: str,
                  use_id: str = "toolu_01") -> dict[str, Any]:
    return {**common("postToolUse", ws), "tool_name": tool, "tool_input": tool_input,
            "tool_output": output, "tool_use_id": use_id, "cwd": str(ws), "duration": 12}


def before_shell(ws: Path, command: str, cwd: Path | None = None) -> dict[str, Any]:
    return {**common("beforeShellExecution", ws), "command": command,
            "cwd": str(cwd or ws), "sandbox": False}


def after_shell(ws: Path, command: str, output: str, cwd: Path | None = None) -> dict[str, Any]:
    return {**common("afterShellExecution", ws), "command": command, "cwd": str(cwd or ws),
            "output": output, "duration": 150}


def before_mcp(ws: Path, tool: str, arguments: str, command: str) -> dict[str, Any]:
    """tool_input is a JSON string; the server is named by its `command` (or `url`)."""
    return {**common("beforeMCPExecution", ws), "tool_name": tool, "tool_input": arguments,
            "command": command}


def before_read(ws: Path, path: Path, content: str) -> dict[str, Any]:
    return {**common("beforeReadFile", ws), "file_path": str(path), "content": content,
            "attachments": []}


def after_edit(ws: Path, path: Path, old: str, new: str) -> dict[str, Any]:
    return {**common("afterFileEdit", ws), "file_path": str(path),
            "edits": [{"old_string": old, "new_string": new}]}


def session_start(ws: Path) -> dict[str, Any]:
    return {**common("sessionStart", ws), "session_id": CONVERSATION,
            "is_background_agent": False, "composer_mode": "agent"}


def session_end(ws: Path) -> dict[str, Any]:
    return {**common("sessionEnd", ws), "session_id": CONVERSATION, "reason": "completed",
            "duration_ms": 45000}
