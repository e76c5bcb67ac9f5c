"""The wire protocol: JSON-RPC 2.0 over a Unix socket, one JSON object per line.

This module is pure (no I/O beyond path lookup) and is the only part of the daemon the
desktop app imports. docs/protocol.md documents every method, result and error.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 8 * 1024 * 1024

# -- methods (client → daemon) ------------------------------------------------------------------
INITIALIZE = "initialize"
SESSIONS_OPEN = "sessions/open"
SESSIONS_CLOSE = "sessions/close"
SESSIONS_LIST = "sessions/list"
WORKSPACES_LIST = "workspaces/list"
INTENTS_LIST = "intents/list"
INTENTS_SELECT = "intents/select"
TOOLS_LIST = "tools/list"
TOOLS_CALL = "tools/call"
TOOLS_AUTHORIZE = "tools/authorize"
TOOLS_REPORT = "tools/report"
APPROVALS_LIST = "approvals/list"
APPROVALS_RESPOND = "approvals/respond"
CHECKPOINTS_LIST = "checkpoints/list"
CHECKPOINTS_DIFF = "checkpoints/diff"
CHECKPOINTS_RESTORE = "checkpoints/restore"
SETTINGS_GET = "settings/get"
SETTINGS_UPDATE = "settings/update"
LEDGER_QUERY = "ledger/query"
EVENTS_SUBSCRIBE = "events/subscribe"

# -- notifications (daemon → subscribed clients) ----------------------------------------------
APPROVALS_REQUESTED = "approvals/requested"
APPROVALS_RESOLVED = "approvals/resolved"
INTENTS_CHANGED = "intents/changed"
INTENTS_ERROR = "intents/error"
TOOLS_STARTED = "tools/started"
TOOLS_FINISHED = "tools/finished"
CHECKPOINTS_CREATED = "checkpoints/created"
SESSIONS_OPENED = "sessions/opened"
SESSIONS_CLOSED = "sessions/closed"
NOTIFICATIONS = (APPROVALS_REQUESTED, APPROVALS_RESOLVED, INTENTS_CHANGED, INTENTS_ERROR,
                 TOOLS_STARTED, TOOLS_FINISHED, CHECKPOINTS_CREATED, SESSIONS_OPENED,
                 SESSIONS_CLOSED)

# -- error codes ------------------------------------------------------------------------------
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNKNOWN_SESSION = -32001
UNKNOWN_APPROVAL = -32002     # never existed, or already answered / withdrawn
UNKNOWN_WORKSPACE = -32003
CHECKPOINT_ERROR = -32004
REQUEST_TOO_LARGE = -32005
DAEMON_STOPPING = -32006
UNSUPPORTED_VERSION = -32007

# -- values -----------------------------------------------------------------------------------
DECISIONS = ("allow", "ask", "deny")
APPROVE, REJECT = "approve", "reject"


def default_socket_path() -> Path:
    """$XDG_RUNTIME_DIR/intentd/intentd.sock, else a private folder of the user's own in /tmp."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "intentd" / "intentd.sock"
    return Path(tempfile.gettempdir()) / f"intentd-{os.getuid()}" / "intentd.sock"


def encode(message: dict[str, Any] | list[Any]) -> bytes:
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in untrusted text: escape it, never fail to answer
        return (json.dumps(message, separators=(",", ":"), default=str) + "\n").encode("ascii")


def request(method: str, params: dict[str, Any] | None = None,
            id: int | str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id is not None:
        message["id"] = id
    return message


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}
