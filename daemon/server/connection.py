"""One client connection: reads lines, answers each request in its own task, writes through a queue."""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.session import Session
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.framing import LineTooLong, read_line
from intentd.daemon.server.rpc import MethodTable
from intentd.daemon.trust.procs import Proc

log = logging.getLogger(__name__)
MAX_QUEUED_MESSAGES = 10_000  # a client this far behind is stuck: it is dropped, not waited for
_ids = itertools.count(1)


class Connection:
    def __init__(self, core: DaemonCore, table: MethodTable, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, chain: list[Proc] | None = None) -> None:
        self.core, self.table = core, table
        self.chain = chain  # the caller and its ancestors when it connected (None: unknown)
        self.reader, self.writer = reader, writer
        self.id = next(_ids)
        self.client_name = f"client-{self.id}"
        self.subscriptions: set[str] | None = None
        self.sessions: set[str] = set()
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(MAX_QUEUED_MESSAGES)
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    def send(self, message: Any) -> None:
        if self._closed:
            return
        try:
            self._outbox.put_nowait(protocol.encode(message))
        except asyncio.QueueFull:
            log.warning("dropping %s: it stopped reading", self.client_name)
            self._abort()

    async def serve(self) -> None:
        writer_task = asyncio.create_task(self._write_loop())
        try:
            await self._read_loop()
        finally:
            self._closed = True
            await self._cleanup(writer_task)

    async def _read_loop(self) -> None:
        while True:
            try:
                line = await read_line(self.reader)
            except LineTooLong:
                self.send(protocol.error(None, protocol.REQUEST_TOO_LARGE,
                                         f"line longer than {protocol.MAX_LINE_BYTES} bytes"))
                continue
            except (ConnectionError, OSError):
                return
            if line is None:
                return
            if line.strip():
                task = asyncio.create_task(self._answer(line))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _answer(self, line: bytes) -> None:
        answer = await self.table.handle_line(self, line)
        if answer is not None:
            self.send(answer)

    async def _write_loop(self) -> None:
        try:
            while True:
                data = await self._outbox.get()
                self.writer.write(data)
                await self.writer.drain()
        except (ConnectionError, OSError):
            self._abort()

    def _abort(self) -> None:
        self._closed = True
        self.writer.transport.abort()

    async def _cleanup(self, writer_task: asyncio.Task[None]) -> None:
        """The client is gone: its waiting calls are withdrawn and its sessions closed."""
        self.core.bus.subscribers.discard(self)
        self.core.approvals.set_approver(self, False)
        for task in list(self._tasks):
            task.cancel()
        try:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        except asyncio.CancelledError:
            pass  # the daemon is stopping; close the sessions all the same
        for session_id in list(self.sessions):
            session = self.core.engine.sessions.get(session_id)
            if session is not None:
                await self.close_session(session)
        writer_task.cancel()
        self.writer.close()

    async def close_session(self, session: Session) -> None:
        self.sessions.discard(session.id)
        await self.core.close_session(session)

    async def finish(self, timeout: float) -> None:
        """At shutdown: let answers already under way go out, then close."""
        try:
            await asyncio.wait_for(self._settle(), timeout)
        except TimeoutError:
            pass
        self.writer.close()

    async def _settle(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        # Once the client has hung up nothing writes the outbox any more: waiting for it to
        # empty would hold the stop for the whole timeout.
        while not self._outbox.empty() and not self._closed:
            await asyncio.sleep(0.01)
