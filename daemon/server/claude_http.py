"""Claude Code's hook events, answered inside the daemon: the half of the HTTP hook that knows
agents, held apart from the half that knows HTTP (server/http_hook.py).

The command hook (agents/hooks/core.py) is a process per tool call, with a keeper process
holding the daemon session between calls. Here the daemon holds that session itself, keyed by
the agent's session id, and each event goes through the method table exactly as a socket
client's `tools/authorize` / `tools/report` would. The agent's adapter (agents/hooks/claude.py)
parses the payload, maps the tools and shapes every answer, as it does for the command hook.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    HookEvent,
    Mapped,
    Reply,
    derived_call_key,
)
from intentd.daemon.agents.hooks.mapping import command_cwd
from intentd.daemon.server.hook_memory import HookMemory
from intentd.daemon.server.http_wire import HookOptions
from intentd.daemon.server.rpc import MethodError, MethodTable
from intentd.daemon.utils.workspaces import enclosing_workspace

log = logging.getLogger(__name__)
# The only methods an HTTP hook request can reach. All are agent-side (protocol.METHOD_SIDES);
# the check below keeps a person method from ever being added here by mistake.
HOOK_METHODS = frozenset({protocol.SESSIONS_OPEN, protocol.SESSIONS_CLOSE, protocol.INTENTS_SELECT,
                          protocol.TOOLS_AUTHORIZE, protocol.TOOLS_REPORT})
if any(protocol.is_person_method(m) for m in HOOK_METHODS):
    raise RuntimeError("the HTTP hook may carry agent-side methods only")

MAX_SESSIONS = 256        # agent sessions held at once; the longest idle is closed first
IDLE_SECONDS = 4 * 3600   # a session not heard from this long is closed (as the keeper did)
MAX_PENDING = 200         # authorized calls awaiting their report, per session
MAX_OUTPUT_CHARS = 100_000
ANSWER_MARGIN = 2.0       # of the hook's timeout: "no person answered" arrives before it ends
# Mapping these reads the file (to show the exact result of an edit): on a tool thread.
READS_FILES = frozenset({"Edit", "MultiEdit", "NotebookEdit"})


@dataclass
class HeldSession:
    key: str                     # the agent's session id
    workspace: str
    session_id: str              # the daemon session
    pending: OrderedDict[str, str] = field(default_factory=OrderedDict)  # call key → call_id
    used: float = field(default_factory=time.monotonic)
    note: str | None = None      # why the intent of before a restart could not be selected again


class HookConnection:
    """The caller as the method table sees it. Its ancestry is unknown (`chain` None), so the
    trust gate would refuse a person method even if one were sent: a second lock."""

    chain = None
    subscriptions = None

    def __init__(self, core: Any, name: str) -> None:
        self.core = core
        self.client_name = f"{name} (HTTP hook)"
        self.sessions: set[str] = set()

    async def close_session(self, session: Any) -> None:
        self.sessions.discard(session.id)
        await self.core.close_session(session)


class HookRefusal(Exception):
    """The request cannot be put to the pipeline; the message says why."""


class HeldSessions:
    """One agent's sessions, held by the daemon, and the answer to each of its hook events."""

    def __init__(self, core: Any, table: MethodTable, adapter: Adapter,
                 memory: HookMemory | None = None) -> None:
        self.core, self.table, self.adapter = core, table, adapter
        self.memory = memory or HookMemory(None)
        self.conn = HookConnection(core, adapter.name)
        self.held: OrderedDict[str, HeldSession] = OrderedDict()
        self._opening: dict[str, asyncio.Future[HeldSession]] = {}
        self._closing: set[asyncio.Task[None]] = set()  # held, so none is collected midway
        self._ids = 0

    async def rpc(self, method: str, params: dict[str, Any]) -> Any:
        """One method through the table (the trust guard included), as a socket request is."""
        if method not in HOOK_METHODS:
            raise MethodError(protocol.PERSON_ONLY, f"{method} is not carried by the HTTP hook")
        self._ids += 1
        answer = await self.table.handle_message(
            self.conn, {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        if answer is None or "error" in answer:
            error = (answer or {}).get("error") or {}
            raise MethodError(error.get("code", protocol.INTERNAL_ERROR),
                              str(error.get("message")), error.get("data"))
        return answer["result"]

    # -- events --------------------------------------------------------------------------------

    async def answer(self, payload: Any, options: HookOptions) -> Reply:
        """The adapter's answer to one hook event. Never raises: trouble on a tool call is a
        deny (a read goes to the agent's own prompt), elsewhere a message for the log."""
        self.expire()
        event: HookEvent | None = None
        try:
            event = self.adapter.event(None, payload)
            if event.kind == "pre_tool":
                return await self.pre_tool(event, options)
            if event.kind == "post_tool":
                return await self.post_tool(event)
            if event.kind == "session_end":
                return await self.session_end(event)
            return self.adapter.no_opinion(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return self.failure(event, exc, None)

    async def pre_tool(self, event: HookEvent, options: HookOptions) -> Reply:
        adapter = self.adapter
        first = (None if event.tool_name in READS_FILES
                 else adapter.map_tool(event.tool_name, event.tool_input, None))
        if first is not None and first.tool is None and first.select is None:
            return adapter.no_opinion(event)  # no say (a neutral tool): nothing blocks it
        try:
            held = await self.session(event, options)
            mapped = await self.map(event, held)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return self.failure(event, exc, first)
        if isinstance(mapped, Reply):
            return mapped
        if mapped.select is not None:
            return await self.select(event, held, mapped.select)
        if mapped.tool is None:
            return adapter.no_opinion(event)
        try:
            # native_prompt: with no approver connected the daemon answers "ask" at once, and
            # the agent's own prompt asks the person; the post_tool report records their yes.
            params: dict[str, Any] = {
                "session_id": held.session_id, "tool": mapped.tool, "args": mapped.args,
                "native_prompt": adapter.native_prompt(event),
                "approval_timeout": max(1.0, options.timeout - ANSWER_MARGIN)}
            turn = adapter.turn(event)
            if turn:  # the calls of one prompt wait together: "approve the rest of this turn"
                params["batch"] = turn
            answer = await self.rpc(protocol.TOOLS_AUTHORIZE, params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return self.failure(event, exc, mapped)
        verdict = answer.get("decision")
        note, held.note = held.note, None
        if note:  # the agent learns why its intent is gone, once
            answer["reason"] = f"{answer.get('reason')} {note}"
        if verdict == "ask":
            self.remember(held, call_key(event), str(answer["call_id"]))
            return adapter.ask(event, f"intentd: {answer.get('reason')}")
        if verdict != "allow":
            reason = str(answer.get("reason") or "refused")
            if answer.get("stage") == "intent_gate":
                reason = f"{reason} {adapter.select_hint}"
            return adapter.deny(event, f"intentd ({answer.get('stage')}): {reason}")
        self.remember(held, call_key(event), str(answer["call_id"]))
        return adapter.allow(event, f"intentd: {answer.get('reason')}")

    async def select(self, event: HookEvent, held: HeldSession, intent_id: str) -> Reply:
        answer = await self.rpc(protocol.INTENTS_SELECT, {"session_id": held.session_id,
                                                          "intent_id": intent_id})
        verdict = answer.get("decision") or {}
        if verdict.get("decision") != "allow":
            return self.adapter.deny(event, f"intentd ({verdict.get('stage')}): "
                                            f"{verdict.get('reason')}")
        self.memory.remember(held.key, held.workspace, intent_id)
        return self.adapter.allow(event, f"intentd: intent {intent_id} selected for this "
                                         f"{self.adapter.label} session",
                                  context=answer.get("context"))

    async def post_tool(self, event: HookEvent) -> Reply:
        held = self.held.get(event.session_key)
        call_id = held.pending.pop(call_key(event), None) if held else None
        if held is None or call_id is None:
            # nothing was authorized for it (a neutral tool, or the daemon restarted meanwhile)
            return self.adapter.no_opinion(event)
        held.used = time.monotonic()
        answer = await self.rpc(protocol.TOOLS_REPORT, {
            "session_id": held.session_id, "call_id": call_id, "ok": event.ok,
            "output": event.output[:MAX_OUTPUT_CHARS]})
        audit = answer.get("scope_audit") if isinstance(answer, dict) else None
        # the scope audit undid changes outside the intent: the agent is told which, by path
        message = str(audit.get("message", "")) if isinstance(audit, dict) else None
        return self.adapter.reported(event, message)

    async def session_end(self, event: HookEvent) -> Reply:
        held = self.held.pop(event.session_key, None)
        self.memory.forget(event.session_key)
        if held is not None:
            await self.close(held)
        return self.adapter.no_opinion(event)

    def failure(self, event: HookEvent | None, exc: Exception, mapped: Mapped | None) -> Reply:
        """Fail closed: a call that may change something is denied, a read goes to the agent's
        prompt; an event that is no tool call is answered with no opinion (and logged)."""
        why = (str(exc) if isinstance(exc, HookRefusal | MethodError)
               else f"{type(exc).__name__}: {exc}")
        if event is not None and event.kind != "pre_tool":
            log.warning("HTTP hook (%s): %s", event.name, why)
            return self.adapter.no_opinion(event)
        if event is not None and mapped is not None and mapped.read_only:
            return self.adapter.ask(event, f"intentd could not check this read ({why}); "
                                           "approve it yourself")
        return self.adapter.deny(event, f"intentd refused this call because it could not "
                                        f"check it ({why})")

    # -- sessions ------------------------------------------------------------------------------

    async def session(self, event: HookEvent, options: HookOptions) -> HeldSession:
        """The daemon session of this agent session, opened at its first call. Parallel first
        calls of one session wait for the same opening."""
        key = event.session_key
        if not key or len(key) > 200:
            raise HookRefusal("the hook input has no usable session_id")
        held = self.held.get(key)
        if held is not None and held.session_id in self.core.engine.sessions:
            held.used = time.monotonic()
            self.held.move_to_end(key)
            return held
        opening = self._opening.get(key)
        if opening is not None:
            return await asyncio.shield(opening)
        future: asyncio.Future[HeldSession] = asyncio.get_running_loop().create_future()
        self._opening[key] = future
        try:
            held = await self._open(key, workspace_of(event, options, held))
            future.set_result(held)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no warning when no parallel call waits on it
            raise
        finally:
            del self._opening[key]
        return held

    async def _open(self, key: str, workspace: str) -> HeldSession:
        info = await self.rpc(protocol.SESSIONS_OPEN, {"workspace": workspace,
                                                       "agent": self.adapter.name})
        held = HeldSession(key, str(info["workspace"]), str(info["session_id"]))
        intent_id = self.memory.intent_of(key, held.workspace)
        if intent_id is not None:  # selected before the daemon restarted: selected again
            answer = await self.rpc(protocol.INTENTS_SELECT, {"session_id": held.session_id,
                                                              "intent_id": intent_id})
            verdict = answer.get("decision") or {}
            if verdict.get("decision") != "allow":
                self.memory.forget(key)
                held.note = (f"(intent {intent_id}, selected before the daemon restarted, could "
                             f"not be selected again: {verdict.get('reason')})")
        self.held[key] = held
        while len(self.held) > MAX_SESSIONS:
            _, oldest = self.held.popitem(last=False)
            await self.close(oldest)
        return held

    async def close(self, held: HeldSession) -> None:
        try:
            await self.rpc(protocol.SESSIONS_CLOSE, {"session_id": held.session_id})
        except MethodError:
            pass  # already gone

    def expire(self) -> None:
        """Sessions idle past IDLE_SECONDS are closed (their unreported calls so recorded)."""
        now = time.monotonic()
        for key, held in list(self.held.items()):
            if now - held.used > IDLE_SECONDS:
                del self.held[key]
                task = asyncio.get_running_loop().create_task(self.close(held))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)

    async def close_all(self) -> None:
        for held in list(self.held.values()):
            await self.close(held)
        self.held.clear()

    def remember(self, held: HeldSession, key: str, call_id: str) -> None:
        held.pending[key] = call_id
        while len(held.pending) > MAX_PENDING:  # never reported (the agent crashed)
            held.pending.popitem(last=False)

    # -- mapping -------------------------------------------------------------------------------

    async def map(self, event: HookEvent, held: HeldSession) -> Mapped | Reply:
        """The agent's call as a pipeline call. An edit's mapping reads the file: that runs on
        a tool thread, and only on a regular file (a FIFO would hold the thread)."""
        # the usual case, cwd the workspace itself, without resolving both paths every call
        cwd = None if event.cwd in (None, held.workspace) else command_cwd(event.cwd,
                                                                          held.workspace)
        if event.tool_name not in READS_FILES:
            return self.adapter.map_tool(event.tool_name, event.tool_input, cwd)
        data = event.tool_input if isinstance(event.tool_input, dict) else {}
        path = data.get("notebook_path" if event.tool_name == "NotebookEdit" else "file_path")
        if isinstance(path, str) and not regular_or_missing(path):
            return self.adapter.deny(event, f"intentd refused this edit: {path} is not a "
                                            "regular file")
        mapped: Mapped = await self.core.threads.run(
            held.session_id, self.adapter.map_tool, event.tool_name, event.tool_input, cwd)
        return mapped


def call_key(event: HookEvent) -> str:
    """Pairs a post_tool with its pre_tool: the agent's call id, else the call itself."""
    return event.call_key or derived_call_key(event.tool_name, event.tool_input)


def regular_or_missing(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False


def workspace_of(event: HookEvent, options: HookOptions, held: HeldSession | None) -> str:
    """The URL's workspace, else the one the session had (it was closed meanwhile), else the
    workspace at or above the agent's cwd at the session's first call."""
    fixed = options.workspace or (held.workspace if held else None)
    chosen = fixed or event.workspace or event.cwd
    if not chosen or not os.path.isdir(chosen):
        raise HookRefusal(f"no workspace folder (cwd {event.cwd!r})")
    folder = Path(chosen).resolve()
    return str(folder if fixed else enclosing_workspace(folder) or folder)
