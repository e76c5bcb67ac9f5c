"""The hook flow every agent shares: its tool calls answered by the pipeline, failing closed."""

# pre_tool → `tools/authorize`, answered allow, deny, or ask (with no approver connected, an
# agent with a prompt of its own asks the person there); post_tool → `tools/report`. When the
# daemon cannot be asked or anything goes wrong, a call that may change something is denied and
# a read goes to the agent's own prompt (denied where there is none). Every wait (connect,
# keeper start, state lock, a person's answer) ends by one deadline set under the agent's hook
# timeout: a hook the agent kills lets the call through in most agents.

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.agents.deadline import Deadline, DeadlineExceeded
from intentd.daemon.agents.hooks.adapter import (
    Adapter,
    HookEvent,
    HookInputError,
    Mapped,
    Reply,
    derived_call_key,
)
from intentd.daemon.agents.hooks.handshake import INTENTS_FILE, hook_handshake
from intentd.daemon.agents.hooks.keeper import START_TIMEOUT, KeeperFailed, start_keeper
from intentd.daemon.agents.hooks.mapping import command_cwd
from intentd.daemon.agents.hooks.state import AgentSession, LockTimeout, StateFile
from intentd.daemon.client import Client, DaemonUnavailable, RpcError, UntrustedDaemon
from intentd.daemon.trust.sides import hook_agent

MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_OUTPUT_CHARS = 100_000
MAX_MARGIN = 5.0        # of the hook timeout, kept for Python's start, the answer and the exit
ANSWER_MARGIN = 1.0     # the daemon's "no person answered" arrives before the socket gives up
LISTING_TIMEOUT = 5.0   # SessionStart's intent list is a nicety: no long wait for it
APPROVAL_TIMEOUT = 45.0  # a person's wait when the command line does not say
LOCK_WAIT = "waiting for the session's state file (another process holds its lock)"


class HookFailed(Exception):
    """The pipeline could not be asked; the message is the reason given to the agent."""


@dataclass(frozen=True)
class HookOptions:
    """The hook command's options (`intentd hook AGENT [EVENT] ...`)."""

    socket: Path | None = None
    workspace: Path | None = None
    approval_timeout: float | None = APPROVAL_TIMEOUT
    hook_timeout: float | None = None   # None: the agent's default
    event: str | None = None            # the EVENT word of the command line


def hook_deadline(hook_timeout: float) -> Deadline:
    """The agent's timeout less a margin (a quarter of it when it is short)."""
    return Deadline.after(hook_timeout - min(MAX_MARGIN, hook_timeout / 4))


def workspace_of(adapter: Adapter, options: HookOptions, event: HookEvent,
                 recorded: str | None = None) -> str | None:
    """The session's workspace folder, resolved: --workspace, else the one the session recorded
    (it keeps it when cwd changes), else the agent's project variable, else the project root
    the payload names, else the hook's cwd."""
    named = [os.environ.get(name) for name in adapter.project_dir_env]
    chosen = (options.workspace or recorded or next((n for n in named if n), None)
              or event.workspace or event.cwd)
    if not chosen or not Path(chosen).is_dir():
        return None
    return str(Path(chosen).resolve())


class HookSession:
    """One hook call's view of its agent session: the state file, read once outside its lock,
    and a daemon connection opened by the first call that needs it."""

    def __init__(self, adapter: Adapter, options: HookOptions, event: HookEvent,
                 deadline: Deadline) -> None:
        if not event.session_key:
            raise HookFailed("the hook input names no session")
        self.adapter, self.options, self.event, self.deadline = adapter, options, event, deadline
        self.state = StateFile(adapter.name, event.session_key)
        self.intent_note: str | None = None  # why a new keeper could not select the intent again
        self._client: Client | None = None
        self._initialized = False

    @cached_property
    def recorded(self) -> AgentSession:
        return self.state.read()

    @cached_property
    def workspace(self) -> str | None:
        return workspace_of(self.adapter, self.options, self.event, self.recorded.workspace)

    def map(self) -> Mapped:
        cwd = self.event.cwd
        if self.workspace is not None:
            cwd = command_cwd(cwd, self.workspace)
        return self.adapter.map_tool(self.event.tool_name, self.event.tool_input, cwd)

    @contextmanager
    def update(self) -> Iterator[AgentSession]:
        """The state under its lock, waited for no longer than the deadline allows."""
        try:
            with self.state.locked(self.deadline.budget(LOCK_WAIT)) as state:
                yield state
        except LockTimeout:
            raise self.deadline.exceeded(LOCK_WAIT) from None

    def session_id(self, gone: str | None = None) -> str:
        """The daemon session the keeper holds; a new keeper when there is none, or when the
        recorded one is `gone` (another hook call may have replaced it already)."""
        if self.recorded.session_id and self.recorded.session_id != gone:
            return str(self.recorded.session_id)
        with self.update() as state:
            if state.session_id and state.session_id != gone:
                return str(state.session_id)
            if self.workspace is None:
                raise HookFailed(f"no workspace folder (cwd {self.event.cwd!r})")
            asked = state.intent_id
            info = self._start_keeper(self.workspace, asked)
            state.workspace, state.session_id = self.workspace, str(info["session_id"])
            state.keeper_pid, state.intent_id = int(info["pid"]), info.get("intent_id")
            state.pending = {}
            if info.get("intent_note"):
                self.intent_note = (f"(the new daemon session could not select intent {asked} "
                                    f"again: {info['intent_note']})")
            return str(state.session_id)

    def _start_keeper(self, workspace: str, intent_id: str | None) -> dict[str, Any]:
        waiting = "waiting for the session keeper to start"
        budget = self.deadline.budget(waiting, cap=START_TIMEOUT)
        try:
            info: dict[str, Any] = start_keeper(self.adapter.name, self.options.socket, workspace,
                                                self.state.path, intent_id, timeout=budget)
        except KeeperFailed as exc:
            if exc.timed_out and budget < START_TIMEOUT:  # the deadline cut its wait short
                raise self.deadline.exceeded(waiting) from None
            raise HookFailed(str(exc)) from None
        return info

    def call(self, method: str, params: dict[str, Any],
             approval_timeout: float | None = None) -> Any:
        """A session call; when the keeper is gone (unknown session), once more with a new one."""
        self._open_socket()  # first: a socket that is not the user's daemon is refused outright
        session_id = self.session_id()
        try:
            return self.send(method, {"session_id": session_id, **params}, approval_timeout)
        except RpcError as exc:
            if exc.code != protocol.UNKNOWN_SESSION:
                raise
        return self.send(method, {"session_id": self.session_id(gone=session_id), **params},
                         approval_timeout)

    def send(self, method: str, params: dict[str, Any],
             approval_timeout: float | None = None) -> Any:
        """One request, answered before the deadline; a person's wait ends a little earlier."""
        client = self._connected()
        if approval_timeout is not None:
            params = {**params, "approval_timeout": self.deadline.budget(
                "waiting for a person", cap=approval_timeout, keep=ANSWER_MARGIN)}
        waiting = f"waiting for the daemon's answer to {method}"
        try:
            return client.call(method, params, timeout=self.deadline.budget(waiting))
        except TimeoutError:
            raise self.deadline.exceeded(waiting) from None

    def _open_socket(self) -> None:
        """Connect (the socket, its folder and its server checked), sending nothing yet. Only a
        refusal of the socket stops here; no daemon at all is reported by the step needing it."""
        if self._client is None:
            client = Client(self.options.socket,
                            timeout=self.deadline.budget("connecting to the daemon"))
            try:
                self._client = client.connect()
            except UntrustedDaemon:
                raise
            except DaemonUnavailable:
                pass

    def _connected(self) -> Client:
        if not self._initialized:
            connecting = "connecting to the daemon"
            self._open_socket()
            client = self._client or Client(  # raises: no daemon
                self.options.socket, timeout=self.deadline.budget(connecting)).connect()
            self._client = client
            client.timeout = self.deadline.budget(connecting)
            try:
                # The agent's process: everything it starts is the agent's side from now on.
                client.initialize(f"intentd-hook-{self.adapter.name}", agent_process=hook_agent())
            except TimeoutError:
                raise self.deadline.exceeded(connecting) from None
            self._initialized = True
        assert self._client is not None
        return self._client

    def noted(self, reason: str) -> str:
        return f"{reason} {self.intent_note}" if self.intent_note else reason

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def call_key(event: HookEvent) -> str:
    """Pairs a post_tool with its pre_tool: the agent's call id, else the call itself."""
    return event.call_key or derived_call_key(event.tool_name, event.tool_input)


def pre_tool(hook: HookSession, mapped: Mapped) -> Reply:
    adapter, event = hook.adapter, hook.event
    if mapped.select is not None:
        return select_intent(hook, mapped.select)
    if mapped.tool is None:  # the agent's own permissions decide
        handshake = tool_handshake(hook)
        return adapter.context(event, handshake) if handshake else adapter.no_opinion(event)
    call_ids: list[str] = []
    reasons: list[str] = []
    asked = False
    for one in (mapped, *mapped.more):
        if one.tool is None:
            continue
        # native_prompt: with no approver connected, the daemon answers "ask" at once and the
        # agent's own permission prompt asks the person; its post_tool then records their yes.
        answer = hook.call(protocol.TOOLS_AUTHORIZE, {
            "tool": one.tool, "args": one.args, "native_prompt": adapter.native_prompt(event)},
            approval_timeout=hook.options.approval_timeout)
        verdict = answer.get("decision")
        if verdict not in ("allow", "ask"):
            withdraw(hook, call_ids)
            reason = str(answer.get("reason") or "refused")
            if answer.get("stage") == "intent_gate":
                reason = f"{reason} {adapter.select_hint}"
                if adapter.handshake_in_tool_context:
                    with hook.update() as state:
                        state.handshake_given = False  # the next allowed call brings it again
            return adapter.deny(event, hook.noted(f"intentd ({answer.get('stage')}): {reason}"))
        call_ids.append(str(answer["call_id"]))
        asked = asked or verdict == "ask"
        if str(answer.get("reason")) not in reasons:
            reasons.append(str(answer.get("reason")))
    if asked or not adapter.reports_at_once(event):
        with hook.update() as state:
            state.pending[call_key(event)] = call_ids
    else:  # no "after" event will come: recorded as done now
        for call_id in call_ids:
            hook.call(protocol.TOOLS_REPORT, {"call_id": call_id, "ok": True, "output": ""})
    said = hook.noted(f"intentd: {'; '.join(reasons)}")
    if asked:
        return adapter.ask(event, said)
    return adapter.allow(event, said, context=tool_handshake(hook))


def tool_handshake(hook: HookSession) -> str | None:
    """The handshake, for an agent that loses SessionStart context, on the first call it may
    ride on while no intent is selected (None otherwise)."""
    if not hook.adapter.handshake_in_tool_context:
        return None
    state = hook.state.read()
    if state.intent_id or state.handshake_given or hook.workspace is None:
        return None
    text = handshake_text(hook, hook.workspace)
    if text is not None:
        with hook.update() as locked:
            locked.handshake_given = True
    return text


def withdraw(hook: HookSession, call_ids: list[str]) -> None:
    """Calls authorized before another part of the same tool call was refused: never run."""
    for call_id in call_ids:
        hook.call(protocol.TOOLS_REPORT, {"call_id": call_id, "ok": False, "output":
                                          "not run: another part of the same tool call was "
                                          "refused"})


def select_intent(hook: HookSession, intent_id: str) -> Reply:
    answer = hook.call(protocol.INTENTS_SELECT, {"intent_id": intent_id})
    verdict = answer.get("decision") or {}
    if verdict.get("decision") != "allow":
        return hook.adapter.deny(hook.event,
                                 f"intentd ({verdict.get('stage')}): {verdict.get('reason')}")
    with hook.update() as state:
        state.intent_id = intent_id
    return hook.adapter.allow(
        hook.event, f"intentd: intent {intent_id} selected for this {hook.adapter.label} session",
        context=answer.get("context"))


def post_tool(hook: HookSession) -> Reply:
    adapter, event = hook.adapter, hook.event
    with hook.update() as state:  # popped before any connection: most calls need none
        call_ids = state.pending.pop(call_key(event), None)
        session_id = state.session_id
    if not call_ids or session_id is None:
        return adapter.no_opinion(event)  # nothing was authorized for it (or a new keeper)
    messages: list[str] = []
    for call_id in call_ids:
        try:
            answer = hook.send(protocol.TOOLS_REPORT, {
                "session_id": session_id, "call_id": call_id, "ok": event.ok,
                "output": event.output[:MAX_OUTPUT_CHARS]})
        except RpcError as exc:  # its session is gone: the daemon recorded it as never reported
            return replace(adapter.no_opinion(event),
                           stderr=f"intentd hook: the report was not recorded: {exc.message}\n")
        audit = answer.get("scope_audit") if isinstance(answer, dict) else None
        if isinstance(audit, dict):
            messages.append(str(audit.get("message", "")))
    # the scope audit undid changes outside the intent: the agent is told which, path by path
    return adapter.reported(event, "\n".join(messages) if messages else None)


def session_end(hook: HookSession) -> Reply:
    """The agent ended the session: its keeper stops (the state file going away tells it)."""
    hook.state.remove()
    return hook.adapter.no_opinion(hook.event)


def session_start(hook: HookSession) -> Reply:
    """At the start of a session, the agent learns the handshake and the intents to pick from."""
    text = handshake_text(hook, hook.workspace) if hook.workspace is not None else None
    return hook.adapter.context(hook.event, text) if text else hook.adapter.no_opinion(hook.event)


def handshake_text(hook: HookSession, root: str) -> str | None:
    """How to select, and the intents to pick from; None when the workspace has no intents."""
    if not (Path(root) / INTENTS_FILE).is_file():
        return None
    try:
        timeout = hook.deadline.budget("listing the intents", cap=LISTING_TIMEOUT)
        with Client(hook.options.socket, timeout=timeout) as client:
            client.initialize(f"intentd-hook-{hook.adapter.name}", agent_process=hook_agent())
            listing = client.call(protocol.INTENTS_LIST, {"workspace": root})
        intents = list(listing.get("intents") or [])
    except (DaemonUnavailable, RpcError, OSError):  # TimeoutError, DeadlineExceeded included
        intents = []  # the gate will list them in its refusal
    return hook_handshake(intents, hook.adapter.shell_tool)


def dispatch(hook: HookSession) -> Reply:
    kind = hook.event.kind
    if kind == "session_start":
        return session_start(hook)
    if kind == "session_end":
        return session_end(hook)
    if kind == "post_tool":
        return post_tool(hook)
    mapped = hook.map()
    try:
        return pre_tool(hook, mapped)
    except Exception as exc:
        return failure(hook.adapter, hook.event, exc, mapped)


def handle(adapter: Adapter, options: HookOptions, payload: Any,
           hook_event: str | None = None, deadline: Deadline | None = None) -> Reply:
    """One hook call, in process: the payload (parsed JSON) in, the agent's answer out."""
    deadline = deadline or hook_deadline(options.hook_timeout or adapter.hook_timeout)
    event: HookEvent | None = None
    try:
        event = adapter.event(hook_event if hook_event is not None else options.event, payload)
        if event.hook_timeout and not options.hook_timeout:
            deadline = deadline.renewed(hook_deadline(event.hook_timeout).seconds)
        if event.kind == "other":
            return adapter.no_opinion(event)
        hook = HookSession(adapter, options, event, deadline)
        try:
            return dispatch(hook)
        finally:
            hook.close()
    except Exception as exc:  # before the call was mapped: it is judged as destructive
        return failure(adapter, event, exc, None)


def read_payload(stream: Any) -> Any:
    raw = stream.buffer.read(MAX_INPUT_BYTES + 1) if hasattr(stream, "buffer") else stream.read()
    if len(raw) > MAX_INPUT_BYTES:
        raise HookInputError("the hook input is too large")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise HookInputError(f"the hook input is not JSON ({exc})") from None


def run(adapter: Adapter, options: HookOptions) -> int:
    """stdin → the adapter's Reply on stdout and stderr, and its exit code."""
    deadline = hook_deadline(options.hook_timeout or adapter.hook_timeout)
    try:
        reply = handle(adapter, options, read_payload(sys.stdin), deadline=deadline)
    except Exception as exc:
        reply = failure(adapter, None, exc, None)
    if reply.stdout:
        sys.stdout.write(reply.stdout)
    sys.stdout.flush()
    if reply.stderr:
        sys.stderr.write(reply.stderr)
        sys.stderr.flush()
    return reply.exit_code


def failure(adapter: Adapter, event: HookEvent | None, exc: Exception,
            mapped: Mapped | None) -> Reply:
    """What the agent is told when the pipeline could not decide: fail closed."""
    if event is not None and event.kind != "pre_tool":
        return replace(adapter.no_opinion(event), stderr=f"intentd hook: {exc}\n")
    if isinstance(exc, UntrustedDaemon):  # someone else's socket: deny, reads included
        return adapter.deny(event, f"intentd refused this call: {exc}")
    if mapped is not None and mapped.tool is None and mapped.select is None:
        return adapter.no_opinion(event)  # a tool intentd has no say on is not blocked
    if isinstance(exc, (DaemonUnavailable, HookFailed, HookInputError, DeadlineExceeded)):
        why = str(exc)
    elif isinstance(exc, (TimeoutError, OSError)):
        why = f"the daemon did not answer: {exc}"
    else:
        why = f"{type(exc).__name__}: {exc}"
    if event is not None and mapped is not None and mapped.read_only:
        return adapter.ask(event, f"intentd could not check this read ({why}); "
                                  "approve it yourself")
    hint = ("; destructive tools stay blocked until `intentd serve` runs"
            if isinstance(exc, DaemonUnavailable) else "")
    return adapter.deny(event, f"intentd refused this call because it could not check it "
                               f"({why}){hint}")
