"""The daemon's lifecycle: the Unix socket (permissions, peer uid, stale files), signals, shutdown."""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import signal
import socket
import stat
import time
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.engine.engine import Engine
from intentd.daemon.server.connection import Connection
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.http_hook import HookService, configured_port, start_http_hook
from intentd.daemon.server.methods import intents_edit, queue, sessions, tools, trace, workspace_data
from intentd.daemon.server.rpc import MethodTable
from intentd.daemon.trust.peer import has_exited, peer_credentials, peer_pidfd
from intentd.daemon.trust.procs import Proc
from intentd.daemon.trust.reaper import start_reaping
from intentd.daemon.trust.sides import Side, caller_chain

log = logging.getLogger(__name__)
SD_LISTEN_FDS_START = 3
# Clients connecting at once wait in this queue; asyncio's default (100) turned a burst of
# hook calls away with EAGAIN. The kernel caps it at net.core.somaxconn.
LISTEN_BACKLOG = 4096
# Connections open at once from callers not on the person's side (agents, the commands they run,
# callers that cannot be vouched for). More are closed at once: a command that opens connections
# without end must not take the descriptors the person's app and CLI need to reach the daemon.
MAX_AGENT_SIDE = 512


def raise_descriptor_limit(ceiling: int = 65536) -> int:
    """Take up to `ceiling` descriptors, as the hard limit allows: a desktop's soft limit of
    1,024 lets agents' workspaces and connections run the daemon out, and the person's app
    could then not connect. Returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = ceiling if hard == resource.RLIM_INFINITY else min(hard, ceiling)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass  # kept as it was: agent_side_limit() scales down with it
    return soft


def agent_side_limit(soft: int | None = None) -> int:
    """MAX_AGENT_SIDE, or a quarter of the daemon's descriptors (`soft`, its limit; None:
    this process's) when it has fewer than 2,048."""
    if soft is None:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return MAX_AGENT_SIDE if soft == resource.RLIM_INFINITY else min(MAX_AGENT_SIDE, soft // 4)


class StartupError(Exception):
    """The daemon cannot start; the message says why and what to do."""


class IntentdServer:
    def __init__(self, socket_path: Path, engine: Engine) -> None:
        self.socket_path = socket_path
        self.engine = engine
        self.core: DaemonCore | None = None
        self.table = MethodTable()
        self.connections: set[Connection] = set()
        self._server: asyncio.AbstractServer | None = None
        self._stopped = asyncio.Event()
        self._owns_socket_file = False
        self.http_hook: HookService | None = None  # Claude Code's HTTP hook, on loopback
        self.agent_side_limit = agent_side_limit()
        self._agent_side = 0  # connections open now from callers not on the person's side
        self._warned_at = -60.0

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # Handlers first: a signal arriving as soon as the socket answers must stop us cleanly.
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.request_stop)
        self.core = DaemonCore(self.engine, loop)
        # Commands and hooks the daemon runs stay its descendants even when they double-fork,
        # so none of them can pass for the person (server/trust_gate.py).
        if start_reaping() is None:
            log.warning("no child subreaper here: a command that double-forks leaves the "
                        "daemon's process tree")
        self.table.guard = self.core.trust.check
        for module in (sessions, tools, queue, workspace_data, intents_edit, trace):
            module.register(self.table, self.core)
        listener = systemd_socket()
        if listener is None:
            listener = bind_socket(self.socket_path)
            self._owns_socket_file = True
        # before the socket answers: whoever sees the daemon up finds its HTTP hook up too
        self.http_hook = await start_http_hook(self.core, self.table, configured_port())
        self._server = await asyncio.start_unix_server(
            self._on_connect, sock=listener, limit=protocol.MAX_LINE_BYTES,
            backlog=LISTEN_BACKLOG)

    def request_stop(self) -> None:
        self._stopped.set()

    async def serve_until_stopped(self) -> None:
        await self._stopped.wait()
        await self.stop()

    async def stop(self) -> None:
        """Pending approvals are answered "daemon stopping", answers flushed, the ledger synced."""
        assert self.core is not None and self._server is not None
        self.core.stopping = True
        self._server.close()
        self.core.approvals.stop_all()
        if self.http_hook is not None:
            await self.http_hook.close()
        await asyncio.gather(*(c.finish(timeout=2) for c in list(self.connections)))
        self.core.close_sessions()
        self.core.close()
        self.engine.close()
        if self._owns_socket_file:
            try:
                self.socket_path.unlink()
            except FileNotFoundError:
                pass

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self.core is not None
        sock = writer.get_extra_info("socket")
        peer = peer_credentials(sock) if sock is not None else None
        if peer is None or peer.uid != os.getuid():
            log.warning("refused a connection from uid %s", peer.uid if peer else None)
            writer.write(protocol.encode(protocol.error(None, protocol.INVALID_REQUEST,
                                                        "connections from other users are refused")))
            writer.close()
            return
        chain = _caller(sock, peer.pid)
        agent_side = self.core.trust.verdict_of(chain).side is not Side.PERSON
        if agent_side and self._agent_side >= self.agent_side_limit:
            if time.monotonic() - self._warned_at > 60:  # a flood is logged once a minute
                self._warned_at = time.monotonic()
                log.warning("%d connections open from agents' side: more are refused until some "
                            "close", self._agent_side)
            writer.write(protocol.encode(protocol.error(
                None, protocol.INVALID_REQUEST,
                f"too many connections open from agents' side ({self._agent_side}); close some")))
            writer.close()
            return
        connection = Connection(self.core, self.table, reader, writer, chain)
        self.connections.add(connection)
        self._agent_side += agent_side
        try:
            await connection.serve()
        finally:
            self._agent_side -= agent_side
            self.connections.discard(connection)


def _caller(sock: socket.socket, pid: int) -> list[Proc] | None:
    """The ancestry of the process that connected; None when it cannot be vouched for. A peer
    that has exited (it may have handed its connection to a child) is never judged by what
    /proc shows under its pid, which another process may have taken meanwhile."""
    try:
        pidfd = peer_pidfd(sock)
    except OSError:
        log.warning("could not hold the caller's pidfd; it cannot be vouched for", exc_info=True)
        return None
    try:
        chain = caller_chain(pid)
        if chain is not None and pidfd is not None and has_exited(pidfd):
            return None
        return chain
    finally:
        if pidfd is not None:
            os.close(pidfd)


def bind_socket(path: Path) -> socket.socket:
    """Bind the socket in a private folder; refuse when another daemon answers there."""
    prepare_folder(path.parent)
    if path.exists() or path.is_symlink():
        if _answers(path):
            raise StartupError(f"another intentd daemon is already serving on {path}")
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise StartupError(f"{path} exists and is not a socket; remove it or use --socket")
        path.unlink()  # stale, left by a daemon that crashed
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket is born 0600: no window where others may connect
    try:
        listener.bind(str(path))
    except OSError as exc:
        listener.close()
        raise StartupError(f"cannot listen on {path}: {exc.strerror or exc}") from None
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    listener.listen(LISTEN_BACKLOG)
    listener.setblocking(False)
    return listener


_WHAT_TO_DO = ("Set XDG_RUNTIME_DIR to your own runtime folder (usually /run/user/$UID), or "
               "start with --socket in a folder of your own (and give clients the same "
               "--socket); an administrator can remove that folder.")


def prepare_folder(folder: Path) -> None:
    try:
        # Only the socket's own folder is made: a mistyped --socket must not leave a trail of
        # folders behind, and a missing parent is a mistake to point out, not to paper over.
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except FileNotFoundError:
        raise StartupError(f"cannot create {folder}: its parent {folder.parent} does not exist "
                           "(intentd makes only the socket's own folder)") from None
    except OSError as exc:
        raise StartupError(f"cannot create {folder}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise StartupError(f"{folder} is not a plain folder (a link?); refusing to use it. "
                           f"{_WHAT_TO_DO}")
    if info.st_uid != os.getuid():
        # Someone else made it first (/tmp/intentd-$UID with no XDG_RUNTIME_DIR): whoever owns
        # it can swap the socket under our clients, so it is never used, only reported.
        raise StartupError(f"{folder} belongs to another user (uid {info.st_uid}), who could "
                           f"put their own socket in place of the daemon's; refusing to use it. "
                           f"{_WHAT_TO_DO}")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def systemd_socket() -> socket.socket | None:
    """The listening socket systemd passed (socket activation), if any."""
    if os.environ.get("LISTEN_PID") != str(os.getpid()):
        return None
    try:
        count = int(os.environ.get("LISTEN_FDS", "0"))
    except ValueError:
        return None
    if count < 1:
        return None
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(name, None)  # not inherited by the commands the daemon runs
    sock = socket.socket(fileno=SD_LISTEN_FDS_START)
    sock.setblocking(False)
    return sock


async def serve(socket_path: Path, engine: Engine) -> None:
    server = IntentdServer(socket_path, engine)
    await server.start()
    await server.serve_until_stopped()
