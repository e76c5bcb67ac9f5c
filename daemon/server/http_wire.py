"""The little HTTP/1.1 the HTTP hook speaks: one POST in, one answer out, then the connection
closes. Strict on purpose: anything a hook client does not send is refused, never guessed at."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_HEAD = 16 * 1024               # request line and headers
MAX_HEADERS = 64
MAX_HOOK_TIMEOUT = 24 * 3600.0
TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ")  # what a header name may hold (RFC 9110)
REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 411: "Length Required", 413: "Content Too Large",
           415: "Unsupported Media Type", 421: "Misdirected Request",
           431: "Request Header Fields Too Large", 500: "Internal Server Error"}
DEFAULT_TIMEOUT = 600.0   # Claude Code's own default for an HTTP hook


class Refused(Exception):
    """Answered with `status` and a one-line reason, then closed."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    headers: dict[str, str]


@dataclass
class HookOptions:
    """What the hook's URL says: its timeout in the agent's settings, a fixed workspace."""

    timeout: float = DEFAULT_TIMEOUT
    workspace: str | None = None


def parse_head(raw: bytes) -> Request:
    """The request line and headers (`raw` ends with the blank line)."""
    try:
        lines = raw.decode("ascii").split("\r\n")[:-2]
        method, target, version = lines[0].split(" ")
    except (UnicodeDecodeError, ValueError, IndexError):
        raise Refused(400, "malformed request line") from None
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise Refused(400, "HTTP/1.x only")
    if len(lines) - 1 > MAX_HEADERS:
        raise Refused(431, "too many headers")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        raw_name, colon, value = line.partition(":")
        # a name with spaces around it, or a folded line, is how requests get smuggled
        if not colon or not raw_name or not TOKEN_CHARS.issuperset(raw_name):
            raise Refused(400, "malformed header")
        name = raw_name.lower()
        if name in headers:  # a second Host, Authorization or Content-Length is an attack
            raise Refused(400, f"duplicate header {name}")
        headers[name] = value.strip()
    return Request(method, target, headers)


def content_length(request: Request, limit: int) -> int:
    if "transfer-encoding" in request.headers:
        raise Refused(411, "send a Content-Length, not Transfer-Encoding")
    raw = request.headers.get("content-length")
    if raw is None or not raw.isdigit():
        raise Refused(411, "Content-Length is required")
    length = int(raw)
    if length > limit:
        raise Refused(413, f"body larger than {limit} bytes")
    return length


def check(request: Request, hosts: set[str], path: str) -> HookOptions:
    """Everything but the token, which is checked once the body is read."""
    headers = request.headers
    if headers.get("host") not in hosts:
        raise Refused(421, "Host must be 127.0.0.1 or localhost with this port")
    if "origin" in headers:
        raise Refused(403, "requests from web pages are refused")
    if request.method != "POST":
        raise Refused(405, "only POST")
    split = urlsplit(request.target)
    if split.path != path:
        raise Refused(404, f"the hook is at {path}")
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise Refused(415, "Content-Type must be application/json")
    return options_of(split.query)


def options_of(query: str) -> HookOptions:
    """`?timeout=SECONDS&workspace=DIR`, as `intentd hook install` writes the URL."""
    try:
        values = parse_qs(query, strict_parsing=False, max_num_fields=8)
    except ValueError:
        raise Refused(400, "malformed query") from None
    options = HookOptions()
    if "timeout" in values:
        try:
            options.timeout = float(values["timeout"][0])
        except ValueError:
            raise Refused(400, "timeout must be a number of seconds") from None
        if not 1.0 <= options.timeout <= MAX_HOOK_TIMEOUT:
            raise Refused(400, "timeout out of range")
    if "workspace" in values:
        options.workspace = values["workspace"][0]
    return options


def parse_event(body: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


def response(status: int, payload: dict[str, Any] | str) -> bytes:
    """One answer, after which the connection closes (no keep-alive: a client reusing a
    connection the server just closed would see its POST fail, and a failed PreToolUse
    blocks). No CORS header, ever."""
    body = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            "Cache-Control: no-store\r\n"
            "X-Content-Type-Options: nosniff\r\n"
            "Connection: close\r\n\r\n").encode()
    return head + body
