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
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.claude import ADAPTER
from intentd.daemon.server import hook_token
from intentd.daemon.server.claude_http import HeldSessions
from intentd.daemon.server.hook_memory import HookMemory
from intentd.daemon.server.http_wire import (
    MAX_HEAD,
    HookOptions,
    Refused,
    Request,
    check,
    content_length,
    parse_event,
    parse_head,
    response,
)
from intentd.daemon.trust.tcp_peer import listener_uid, peer_uid

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
PATH = "/claude-code"
MAX_BODY = protocol.MAX_LINE_BYTES  # as much as one socket request may carry
MAX_CONNECTIONS = 256              # at once; more are closed unanswered
MAX_BUFFERED = 64 * 1024 * 1024    # request bytes held by all connections at once
MAX_REFUSED_BODY = 64 * 1024       # read for a friendly refusal when the token is wrong
HEAD_TIMEOUT = 10.0                # a client that dribbles its headers is dropped
BODY_TIMEOUT = 30.0
STOP_GRACE = 2.0
SETTING = "INTENTD_HTTP_HOOK"      # the daemon's option: "off", or the port to listen on


class HookConnection(asyncio.Protocol):
    """One connection, one request. A plain Protocol, not streams: a request costs one task
    (the answer's), and the connection going away cancels it at once, so a person's approval
    is withdrawn when Claude Code stops waiting."""

    def __init__(self, server: HttpHookServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.request: Request | None = None
        self.options = HookOptions()
        self.length = 0
        self.task: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.held = 0  # bytes of this request counted in server.buffered

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        server = self.server
        if len(server.connections) >= MAX_CONNECTIONS:
            transport.abort()
            return
        sock = transport.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid != os.getuid():  # another user's process, or one the kernel cannot name
            log.warning("HTTP hook: refused a connection from uid %s", uid)
            transport.abort()
            return
        server.connections.add(self)
        self.timer = server.loop.call_later(HEAD_TIMEOUT, transport.abort)

    def data_received(self, data: bytes) -> None:
        if self.task is not None or self.transport is None or self.transport.is_closing():
            return  # one request per connection: anything after it is not read
        self.buffer += data
        self._hold(len(data))
        try:
            if self.server.buffered > MAX_BUFFERED:  # many big requests at once: memory first
                raise Refused(503, "too many requests at once")
            if self.request is None and not self._head():
                return
            if len(self.buffer) >= self.length:
                self._answer(bytes(self.buffer[:self.length]))
        except Refused as exc:
            self.finish(exc.status, {"error": str(exc)})

    def _head(self) -> bool:
        """Parse the head once it is all here; False while more is needed."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                raise Refused(431, "request head too large")
            return False
        if end + 4 > MAX_HEAD:
            raise Refused(431, "request head too large")
        request = parse_head(bytes(self.buffer[:end + 4]))
        self.options = check(request, self.server.hosts, PATH)
        self.length = content_length(request, MAX_BODY)
        if (self.length > MAX_REFUSED_BODY
                and not hook_token.matches(self.server.token, request.headers.get("authorization"))):
            raise Refused(401, "the hook token is missing or wrong")  # its body is never read
        self.request = request
        del self.buffer[:end + 4]
        self._rearm(BODY_TIMEOUT)
        return True

    def _answer(self, body: bytes) -> None:
        self._rearm(None)
        self.buffer.clear()
        self._hold(-self.held)
        assert self.request is not None
        payload = parse_event(body)
        if payload is None:
            raise Refused(400, "the body is not a JSON object")
        if not hook_token.matches(self.server.token, self.request.headers.get("authorization")):
            log.warning("HTTP hook: refused a request without the right token")
            self.finish(200, self.server.token_refusal(payload))
            return
        self.server.served += 1
        self.task = self.server.loop.create_task(self._reply(payload))

    async def _reply(self, payload: dict[str, Any]) -> None:
        try:
            reply = await self.server.sessions.answer(payload, self.options)
        except Exception:  # answer() fails closed itself; this is only a last resort
            log.exception("HTTP hook: answering failed")
            self.finish(500, {"error": "intentd could not answer"})
            return
        self.finish(200, reply.stdout)

    def finish(self, status: int, payload: dict[str, Any] | str) -> None:
        self._rearm(None)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(response(status, payload))
            self.transport.close()  # after what is written has gone out

    def _hold(self, count: int) -> None:
        self.held += count
        self.server.buffered += count

    def _rearm(self, seconds: float | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if seconds is not None and self.transport is not None:
            self.timer = self.server.loop.call_later(seconds, self.transport.abort)

    def eof_received(self) -> bool | None:
        return False  # a client that stops sending has stopped waiting too: close

    def connection_lost(self, exc: Exception | None) -> None:
        self._rearm(None)
        self._hold(-self.held)
        self.server.connections.discard(self)
        if self.task is not None and not self.task.done():
            self.task.cancel()  # Claude Code gave up: its waiting call is withdrawn


class HttpHookServer:
    """The loopback listener in front of one agent's held sessions."""

    def __init__(self, sessions: HeldSessions, token: str, port: int, host: str = HOST) -> None:
        self.sessions, self.token, self.port, self.host = sessions, token, port, host
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.loop = asyncio.get_running_loop()
        self.connections: set[HookConnection] = set()
        self.buffered = 0  # request bytes the connections hold (MAX_BUFFERED)
        self._server: asyncio.AbstractServer | None = None
        self.served = 0

    async def start(self) -> None:
        # No SO_REUSEPORT: no other process, of this user or another, may share the port.
        self._server = await self.loop.create_server(lambda: HookConnection(self), self.host,
                                                     self.port, reuse_port=False)
        if self.port == 0:
            self.port = self._server.sockets[0].getsockname()[1]
            self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    async def close(self, grace: float = STOP_GRACE) -> None:
        """Stop listening; answers under way get `grace` seconds to go out (approvals were
        answered "daemon stopping" just before), then the rest are cancelled."""
        if self._server is not None:
            self._server.close()
        tasks = {c.task for c in self.connections if c.task is not None}
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        for connection in list(self.connections):
            if connection.transport is not None:
                connection.transport.abort()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def token_refusal(self, payload: dict[str, Any]) -> str:
        """The answer that blocks a tool call: the agent sent no token, or the wrong one."""
        adapter = self.sessions.adapter
        reason = (f"intentd refused this hook request: the {hook_token.TOKEN_ENV} token is "
                  f"missing or wrong. Start {adapter.label} with it exported "
                  f"(`export {hook_token.TOKEN_ENV}=\"$(intentd hook token)\"`).")
        try:
            event = adapter.event(None, payload)
        except Exception:
            return adapter.deny(None, reason).stdout
        if event.kind == "pre_tool":
            return adapter.deny(event, reason).stdout
        return json.dumps({"systemMessage": reason})


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
    memory = HookMemory(hook_token.hook_dir(core.engine.home) / "sessions.json")
    sessions = HeldSessions(core, table, ADAPTER, memory)
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
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:  # private like the rest of the state
            handle.write(data)
        os.replace(temp, path)
    except OSError:
        log.warning("could not write %s", path)
