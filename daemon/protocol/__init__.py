"""The wire protocol: JSON-RPC 2.0 over a Unix socket, one JSON object per line.

This package is pure (no I/O beyond path lookup) and is the only part of the daemon the
desktop app imports. Here: the method and notification names, who may call each
(METHOD_SIDES), the error codes, the client's checks of the socket, and message framing.
`messages` declares the typed shapes of results and notifications (decoded by `codec`), and
`doc` renders docs/protocol.md's tables from all of it; the document describes every method,
result and error.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import tempfile
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_BATCH = 100  # requests in one batch: 170,000 small ones in a line took a minute to answer

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
SETTINGS_CONFIRM = "settings/confirm"
LEDGER_QUERY = "ledger/query"
LEDGER_VERIFY = "ledger/verify"
TRACE_BLAME = "trace/blame"
EVENTS_SUBSCRIBE = "events/subscribe"
GRANTS_LIST = "grants/list"
GRANTS_REVOKE = "grants/revoke"
GRANTS_CONFIRM = "grants/confirm"

# -- notifications (daemon → subscribed clients) ----------------------------------------------
APPROVALS_REQUESTED = "approvals/requested"
APPROVALS_RESOLVED = "approvals/resolved"
INTENTS_CHANGED = "intents/changed"
INTENTS_ERROR = "intents/error"
TOOLS_STARTED = "tools/started"
TOOLS_FINISHED = "tools/finished"
CHECKPOINTS_CREATED = "checkpoints/created"
CHECKPOINTS_PROGRESS = "checkpoints/progress"
SESSIONS_OPENED = "sessions/opened"
SESSIONS_CLOSED = "sessions/closed"
SETTINGS_REQUESTED = "settings/requested"
SETTINGS_RESOLVED = "settings/resolved"
NOTIFICATIONS: tuple[str, ...] = (APPROVALS_REQUESTED, APPROVALS_RESOLVED, INTENTS_CHANGED, INTENTS_ERROR,
                 TOOLS_STARTED, TOOLS_FINISHED, CHECKPOINTS_CREATED, CHECKPOINTS_PROGRESS,
                 SESSIONS_OPENED,
                 SESSIONS_CLOSED, SETTINGS_REQUESTED, SETTINGS_RESOLVED)

# -- who may call what ------------------------------------------------------------------------
# Agent methods may come from any process of the user; person methods only from the person's
# side (never from an agent or anything it started: the daemon decides from the calling
# process). Every method is listed here; one missing from the table is a person method.
AGENT, PERSON = "agent", "person"
METHOD_SIDES: dict[str, str] = {
    INITIALIZE: AGENT, SESSIONS_OPEN: AGENT, SESSIONS_CLOSE: AGENT, SESSIONS_LIST: AGENT,
    WORKSPACES_LIST: AGENT, INTENTS_LIST: AGENT, INTENTS_SELECT: AGENT,
    TOOLS_LIST: AGENT, TOOLS_CALL: AGENT, TOOLS_AUTHORIZE: AGENT, TOOLS_REPORT: AGENT,
    APPROVALS_LIST: AGENT, CHECKPOINTS_LIST: AGENT, CHECKPOINTS_DIFF: AGENT,
    SETTINGS_GET: AGENT, LEDGER_QUERY: AGENT, EVENTS_SUBSCRIBE: AGENT,
    LEDGER_VERIFY: AGENT, TRACE_BLAME: AGENT,  # reads: the chain's state, a file's authors
    APPROVALS_RESPOND: PERSON, CHECKPOINTS_RESTORE: PERSON, SETTINGS_UPDATE: PERSON,
    SETTINGS_CONFIRM: PERSON,
    GRANTS_LIST: AGENT, GRANTS_REVOKE: PERSON, GRANTS_CONFIRM: PERSON,
}

# The person's edits of the intents file go through the daemon, its one writer
# (daemon/intents_edit/); reading the file and previewing a scope are reads.
INTENTS_READ = "intents/read"
INTENTS_PREVIEW_SCOPE = "intents/preview_scope"
INTENTS_CREATE = "intents/create"
INTENTS_UPDATE_STATUS = "intents/update_status"
INTENTS_SCOPE_ADD = "intents/scope_add"
INTENTS_SCOPE_REMOVE = "intents/scope_remove"
INTENTS_SCOPE_SET = "intents/scope_set"
INTENTS_REMOVE = "intents/remove"
METHOD_SIDES.update({
    INTENTS_READ: AGENT, INTENTS_PREVIEW_SCOPE: AGENT, INTENTS_CREATE: PERSON,
    INTENTS_UPDATE_STATUS: PERSON, INTENTS_SCOPE_ADD: PERSON, INTENTS_SCOPE_REMOVE: PERSON,
    INTENTS_SCOPE_SET: PERSON, INTENTS_REMOVE: PERSON,
})


def is_person_method(method: str) -> bool:
    return METHOD_SIDES.get(method, PERSON) == PERSON


# -- notifications of approvers and grants ----------------------------------------------------
APPROVERS_CHANGED = "approvers/changed"   # how many approvers are connected
GRANTS_CHANGED = "grants/changed"         # a grant was added or revoked
GRANTS_REQUESTED = "grants/requested"     # a grant asked for outside the app waits for it
GRANTS_RESOLVED = "grants/resolved"
NOTIFICATIONS += (APPROVERS_CHANGED, GRANTS_CHANGED, GRANTS_REQUESTED, GRANTS_RESOLVED)


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
PERSON_ONLY = -32008          # a person method called from an agent's side (or from unknown)
INTENTS_CONFLICT = -32020     # the intents file changed since the edit's base_sha256: nothing written
INTENTS_INVALID = -32021      # the edit would make the intents file invalid, or names no intent

# -- values -----------------------------------------------------------------------------------
DECISIONS = ("allow", "ask", "deny")
APPROVE, REJECT = "approve", "reject"


def default_socket_path() -> Path:
    """$XDG_RUNTIME_DIR/intentd/intentd.sock, else a private folder of the user's own in /tmp."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "intentd" / "intentd.sock"
    return Path(tempfile.gettempdir()) / f"intentd-{os.getuid()}" / "intentd.sock"


def socket_problem(path: Path) -> str | None:
    """Why the socket at `path` may not be the user's own daemon (None: fit to use, or absent).

    Another local user can create /tmp/intentd-$UID first and plant a socket there; so the
    folder must be the user's own and closed to others, and the socket the user's own."""
    uid = os.getuid()
    fix = "; remove it (or use another --socket) and start `intentd serve`"
    try:
        folder = os.lstat(path.parent)
    except FileNotFoundError:
        return None  # no daemon: the caller's usual "not running" applies
    except OSError as exc:
        return f"cannot check the socket folder {path.parent}: {exc.strerror or exc}"
    if not stat.S_ISDIR(folder.st_mode):
        return f"the socket folder {path.parent} is not a plain folder (a link?){fix}"
    if folder.st_uid != uid:
        return (f"the socket folder {path.parent} belongs to uid {folder.st_uid}, not to you "
                f"(uid {uid}): another user may have planted the socket{fix}")
    if folder.st_mode & 0o077:
        return (f"the socket folder {path.parent} is open to other users (mode "
                f"{stat.S_IMODE(folder.st_mode):04o}, must be 0700){fix}")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot check the socket {path}: {exc.strerror or exc}"
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket{fix}"
    if info.st_uid != uid:
        return f"the socket {path} belongs to uid {info.st_uid}, not to you (uid {uid}){fix}"
    return None


def peer_problem(sock: socket.socket) -> str | None:
    """Why the process that answered on a connected socket is not one of the user's own."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None  # not Linux: the folder and socket checks above are what there is
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError as exc:
        return f"cannot read the daemon's credentials: {exc.strerror or exc}"
    _pid, uid, _gid = struct.unpack("3i", raw)
    if uid != os.getuid():
        return (f"the process serving the socket runs as uid {uid}, not as you "
                f"(uid {os.getuid()}): it is not your intentd daemon")
    return None


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


def workspace_labels(paths: list[str]) -> dict[str, str]:
    """Each workspace's short name for people: its folder's name, with as many parent folders as
    it takes to tell apart workspaces of the same name (`work/app` and `play/app`)."""
    def tail(path: str, depth: int) -> str:
        parts = [part for part in path.split("/") if part]
        return "/".join(parts[-depth:]) or path

    labels = {path: tail(path, 1) for path in paths}
    for depth in range(2, 256):
        seen: dict[str, int] = {}
        for label in labels.values():
            seen[label] = seen.get(label, 0) + 1
        clashing = [path for path, label in labels.items() if seen[label] > 1]
        if not clashing:
            break
        for path in clashing:
            labels[path] = tail(path, depth)
    return labels
