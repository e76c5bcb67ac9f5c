"""A client of the daemon's HTTP hook for tests: raw requests, and Claude Code's payloads."""

from __future__ import annotations

import http.client
import json
import socket
import time
from pathlib import Path
from typing import Any

SESSION = "5a1b9e3c-7d2f-4e8a-b6c1-2f3e4d5a6b7c"


def hook_files(state_dir: Path, timeout: float = 10) -> tuple[int, str]:
    """The port the daemon serves the hook on, and its token (from the daemon's state folder;
    the socket may answer a moment before the status file is written)."""
    folder = state_dir / "intentd" / "http-hook"
    deadline = time.monotonic() + timeout
    while not (folder / "status.json").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    port = int(json.loads((folder / "status.json").read_text())["port"])
    return port, (folder / "token").read_text().strip()


def payload(name: str, ws: Path, tool: str = "", tool_input: dict[str, Any] | None = None, *,
            use_id: str = "toolu_1", response: Any = None,
            session: str = SESSION) -> dict[str, Any]:
    """A hook input as Claude Code 2.1 sends it (the fields it sent in a recorded run)."""
    body: dict[str, Any] = {
        "session_id": session, "transcript_path": f"/home/me/.claude/projects/x/{session}.jsonl",
        "cwd": str(ws), "prompt_id": "d4f06c37-57c4-4b24-8f6f-2a2ce0e4da37",
        "permission_mode": "default", "effort": {"level": "medium"}, "hook_event_name": name}
    if name.startswith(("PreToolUse", "PostToolUse")):
        body.update(tool_name=tool, tool_input=tool_input or {}, tool_use_id=use_id)
    if name == "PostToolUse":
        body["tool_response"] = response if response is not None else {"success": True}
    if name == "SessionEnd":
        body["reason"] = "other"
    return body


class HookClient:
    def __init__(self, port: int, token: str | None, timeout: float = 30) -> None:
        self.port, self.token, self.timeout = port, token, timeout

    def post(self, body: Any, *, headers: dict[str, str] | None = None,
             path: str = "/claude-code?timeout=30") -> tuple[int, Any]:
        """POST as Claude Code does (axios): JSON, a Bearer token, Host 127.0.0.1:PORT."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        sent = {"Content-Type": "application/json", "Accept": "application/json, text/plain, */*",
                "User-Agent": "axios/1.15.2"}
        if self.token is not None:
            sent["Authorization"] = f"Bearer {self.token}"
        sent.update(headers or {})
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            conn.request("POST", path, body=data, headers=sent)
            answer = conn.getresponse()
            raw = answer.read()
            return answer.status, (json.loads(raw) if raw.strip() else {})
        finally:
            conn.close()

    def pre(self, ws: Path, tool: str, tool_input: dict[str, Any], **kw: Any) -> tuple[str, str]:
        status, answer = self.post(payload("PreToolUse", ws, tool, tool_input, **kw))
        assert status == 200, answer
        out = answer["hookSpecificOutput"]
        assert out["hookEventName"] == "PreToolUse"
        return out["permissionDecision"], out["permissionDecisionReason"]

    def raw(self, data: bytes, read: bool = True) -> bytes:
        """Bytes as they are sent, and whatever comes back before the server closes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout) as sock:
            sock.sendall(data)
            if not read:
                return b""
            chunks = []
            while True:
                try:
                    chunk = sock.recv(65536)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
