"""Claude Code's HTTP hook, served by the daemon on loopback: no process per tool call.

Who may talk to it, checked in this order on every request:
- the peer's socket belongs to this user (the kernel says so: trust/tcp_peer.py), so another
  local user's process is turned away before a byte is read;
- Host is exactly 127.0.0.1:PORT or localhost:PORT, and there is no Origin: a web page that
  rebinds a DNS name to 127.0.0.1, or posts across origins, is refused (and no CORS header is
  ever sent, so a browser never shows a page the answer);
- Content-Type is application/json (a browser cannot send that without a preflight, which is
  refused) and the body has a Content-Length within MAX_BODY;
- `Authorization: Bearer TOKEN` matches the token file (constant-time compare).
A request from Claude Code that fails the token check is answered in the form that blocks
(a PreToolUse deny); anything malformed gets a 4xx, which blocks under `"onFailure": "block"`.
Only agent-side methods are behind it (server/claude_http.py): the token is the agent's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.claude import ADAPTER
from intentd.daemon.server import hook_token
from intentd.daemon.server.claude_http import HeldSessions, HookOptions
from intentd.daemon.trust.tcp_peer import listener_uid, peer_uid

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
PATH = "/claude-code"
MAX_HEAD = 16 * 1024               # request line and headers
MAX_HEADERS = 64
MAX_BODY = protocol.MAX_LINE_BYTES  # as much as one socket request may carry
MAX_CONNECTIONS = 256              # at once; more are closed at once (each waits on a thread)
HEAD_TIMEOUT = 10.0                # a client that dribbles its headers is dropped
BODY_TIMEOUT = 30.0
MAX_HOOK_TIMEOUT = 24 * 3600.0
STOP_GRACE = 2.0
TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ")  # what a header name may hold (RFC 9110)
SETTING = "INTENTD_HTTP_HOOK"      # the daemon's option: "off", or the port to listen on
REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 411: "Length Required", 413: "Content Too Large",
           415: "Unsupported Media Type", 421: "Misdirected Request",
           431: "Request Header Fields Too Large", 503: "Service Unavailable"}


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


class HttpHookServer:
    """The loopback listener in front of one agent's held sessions."""

    def __init__(self, sessions: HeldSessions, token: str, port: int, host: str = HOST) -> None:
        self.sessions, self.token, self.port, self.host = sessions, token, port, host
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self._slots = asyncio.Semaphore(MAX_CONNECTIONS)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.served = 0

    async def start(self) -> None:
        # No SO_REUSEPORT: no other process, of this user or another, may share the port.
        self._server = await asyncio.start_server(self._on_connect, self.host, self.port,
                                                  limit=MAX_HEAD, reuse_port=False)
        if self.port == 0:
            self.port = self._server.sockets[0].getsockname()[1]
            self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    async def close(self, grace: float = STOP_GRACE) -> None:
        """Stop listening; answers under way get `grace` seconds to go out (approvals were
        answered "daemon stopping" just before), then the rest are cancelled."""
        if self._server is not None:
            self._server.close()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=grace)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _on_connect(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            if self._slots.locked():
                return  # over the limit: closed unanswered
            async with self._slots:
                await self._serve(reader, writer)
        except Exception:  # whatever a client sends, the daemon goes on
            log.exception("HTTP hook: a request failed")
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid != os.getuid():
            log.warning("HTTP hook: refused a connection from uid %s", uid)
            return  # another user's process (or one the kernel cannot name): not a byte read
        try:
            request = await asyncio.wait_for(read_head(reader), HEAD_TIMEOUT)
            options = self.check(request)
            body = await asyncio.wait_for(read_body(reader, request), BODY_TIMEOUT)
        except Refused as exc:
            await respond(writer, exc.status, {"error": str(exc)})
            return
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            return
        payload = parse_event(body)
        if payload is None:
            await respond(writer, 400, {"error": "the body is not a JSON object"})
            return
        if not hook_token.matches(self.token, request.headers.get("authorization")):
            log.warning("HTTP hook: refused a request without the right token")
            await respond(writer, 200, self.token_refusal(payload))
            return
        self.served += 1
        reply = await until_disconnect(reader, self.sessions.answer(payload, options))
        if reply is not None:
            await respond(writer, 200, reply.stdout)

    def token_refusal(self, payload: dict[str, Any]) -> str:
        """The answer that blocks a tool call: the agent sent no token, or the wrong one."""
        reason = (f"intentd refused this hook request: the {hook_token.TOKEN_ENV} token is "
                  f"missing or wrong. Start {self.sessions.adapter.label} with it exported "
                  f"(`export {hook_token.TOKEN_ENV}=\"$(intentd hook token)\"`).")
        adapter = self.sessions.adapter
        try:
            event = adapter.event(None, payload)
        except Exception:
            return adapter.deny(None, reason).stdout
        if event.kind == "pre_tool":
            return adapter.deny(event, reason).stdout
        return json.dumps({"systemMessage": reason})

    def check(self, request: Request) -> HookOptions:
        """Everything but the token, which is checked once the body is read."""
        headers = request.headers
        if headers.get("host") not in self.hosts:
            raise Refused(421, "Host must be 127.0.0.1 or localhost with this port")
        if "origin" in headers:
            raise Refused(403, "requests from web pages are refused")
        if request.method != "POST":
            raise Refused(405, "only POST")
        split = urlsplit(request.target)
        if split.path != PATH:
            raise Refused(404, f"the hook is at {PATH}")
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise Refused(415, "Content-Type must be application/json")
        return options_of(split.query)


async def read_head(reader: asyncio.StreamReader) -> Request:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise Refused(431, "request head too large") from None
    try:
        lines = raw.decode("ascii").split("\r\n")[:-2]
        method, target, version = lines[0].split(" ")
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "malformed request line") from None
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise Refused(400, "HTTP/1.x only")
    if len(lines) - 1 > MAX_HEADERS:
        raise Refused(431, "too many headers")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        raw_name, colon, value = line.partition(":")
        # a name with spaces around it, or a folded line, is how requests get smuggled
        if not colon or not TOKEN_CHARS.issuperset(raw_name) or not raw_name:
            raise Refused(400, "malformed header")
        name = raw_name.lower()
        if name in headers:  # a second Host, Authorization or Content-Length is an attack
            raise Refused(400, f"duplicate header {name}")
        headers[name] = value.strip()
    return Request(method, target, headers)


async def read_body(reader: asyncio.StreamReader, request: Request) -> bytes:
    if "transfer-encoding" in request.headers:
        raise Refused(411, "send a Content-Length, not Transfer-Encoding")
    raw = request.headers.get("content-length")
    if raw is None or not raw.isdigit():
        raise Refused(411, "Content-Length is required")
    length = int(raw)
    if length > MAX_BODY:
        raise Refused(413, f"body larger than {MAX_BODY} bytes")
    return await reader.readexactly(length)


def parse_event(body: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


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


async def until_disconnect(reader: asyncio.StreamReader, work: Any) -> Any:
    """`work`'s result; None (and `work` cancelled, so its approval is withdrawn) when the
    client goes away first: Claude Code gave up on the hook."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(reader.read(1))
    try:
        done, _ = await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        if gone.result() != b"":
            return await task  # more bytes (not a hangup): just wait for the answer
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()


async def respond(writer: asyncio.StreamWriter, status: int,
                  payload: dict[str, Any] | str) -> None:
    """One answer, then the connection closes (no keep-alive: a client reusing a connection
    the server just closed would see its POST fail, and a failed PreToolUse blocks)."""
    body = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            "Cache-Control: no-store\r\n"
            "X-Content-Type-Options: nosniff\r\n"
            "Connection: close\r\n\r\n").encode()
    try:
        writer.write(head + body)
        await writer.drain()
    except (ConnectionError, OSError):
        pass


@dataclass
class HookService:
    """The HTTP hook as the daemon runs it: the listener, its sessions, and a status file."""

    server: HttpHookServer
    sessions: HeldSessions

    async def close(self) -> None:
        await self.server.close()
        await self.sessions.close_all()


def configured_port(value: str | None = None) -> int | None:
    """The port from INTENTD_HTTP_HOOK: unset, this user's default port; "off", None; a
    number, that port (0: any free one, as tests use)."""
    raw = (os.environ.get(SETTING, "") if value is None else value).strip().lower()
    if not raw or raw == "on":
        return hook_token.default_port()
    if raw in ("off", "no", "false"):
        return None
    try:
        port = int(raw)
    except ValueError:
        log.warning("HTTP hook off: %s=%r is neither \"off\" nor a port", SETTING, raw)
        return None
    return port if 0 <= port <= 65535 else None


async def start_http_hook(core: Any, table: Any, port: int | None) -> HookService | None:
    """Serve the HTTP hook, or say why not and carry on (the command hook still works).
    `port` None: turned off; 0: any free port (tests)."""
    if port is None:
        return None
    try:
        token = hook_token.load_or_create(core.engine.home)
    except (OSError, hook_token.TokenError) as exc:
        log.warning("HTTP hook off: %s", exc)
        return None
    sessions = HeldSessions(core, table, ADAPTER)
    server = HttpHookServer(sessions, token, port)
    try:
        await server.start()
    except OSError as exc:
        holder = listener_uid(port) if port else None
        who = ("" if holder is None else " by this user" if holder == os.getuid()
               else f" by ANOTHER USER (uid {holder}): hooks sent there reach them")
        log.warning("HTTP hook off: cannot listen on %s:%s: %s (the port is held%s; set "
                    "%s=PORT to use another, and install the hook again)", HOST, port,
                    exc.strerror or exc, who, SETTING)
        return None
    log.info("HTTP hook on http://%s:%s%s", HOST, server.port, PATH)
    write_status(core.engine.home, server.port)
    return HookService(server, sessions)


def write_status(home: Any, port: int) -> None:
    """Where the hook listens, for `intentd hook install` and `doctor` (and tests on port 0)."""
    path = hook_token.hook_dir(home) / "status.json"
    data = json.dumps({"port": port, "pid": os.getpid(), "url": f"http://{HOST}:{port}{PATH}",
                       "started": time.time()})
    temp = path.with_name(f".status.{os.getpid()}")
    try:
        temp.write_text(data)
        os.replace(temp, path)
    except OSError:
        log.warning("could not write %s", path)
