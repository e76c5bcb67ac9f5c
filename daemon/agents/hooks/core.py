"""The hook flow every agent shares: its tool calls answered by the pipeline, failing closed."""

# pre_tool → `tools/authorize`, answered allow, deny, or ask (with no approver connected, an
# agent with a prompt of its own asks the person there); post_tool → `tools/report`. When the
# daemon cannot be asked or anything goes wrong, a call that may change something is denied and
# a read goes to the agent's own prompt (denied where there is none). Every wait (connect,
# keeper start, state lock, a person's answer) ends by one deadline set under the agent's hook
# timeout: a hook the agent kills lets the call through in most agents.

from __future__ import annotations

import json
import sys
from dataclasses import replace
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
from intentd.daemon.agents.hooks.session import (
    HookFailed,
    HookOptions,
    HookSession,
    hook_deadline,
)
from intentd.daemon.client import Client, DaemonUnavailable, RpcError, UntrustedDaemon
from intentd.daemon.trust.sides import hook_agent

__all__ = ["HookOptions", "handle", "run"]

MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_OUTPUT_CHARS = 100_000
LISTING_TIMEOUT = 5.0   # SessionStart's intent list is a nicety: no long wait for it


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
        params: dict[str, Any] = {"tool": one.tool, "args": one.args,
                                  "native_prompt": adapter.native_prompt(event)}
        turn = adapter.turn(event)
        if turn:  # the calls of one turn wait together: "approve the rest of this turn"
            params["batch"] = turn
        answer = hook.call(protocol.TOOLS_AUTHORIZE, params,
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
    key = call_key(event)
    with hook.update() as state:  # popped before any connection: most calls need none
        call_ids = state.pending.pop(key, None)
        waiting = state.told.pop(key, None)  # an earlier report's message, never read
        session_id = state.session_id
    if not call_ids or session_id is None:  # nothing was authorized for it (or a new keeper)
        return adapter.reported(event, waiting)
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
    message = "\n".join(m for m in (waiting, *messages) if m) or None
    if message is not None and adapter.answer_ignored(event):
        with hook.update() as state:  # told by the same call's next report instead
            earlier = state.told.get(key)
            state.told[key] = f"{earlier}\n{message}" if earlier else message
    return adapter.reported(event, message)


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
        try:
            return failure(adapter, event, exc, None)
        except Exception as broken:  # the adapter's own answer failed: exit 2 blocks in most
            return Reply(stderr=f"intentd hook: {exc}; then {broken}\n", exit_code=2)


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
        try:
            reply = failure(adapter, None, exc, None)
        except Exception as broken:  # the adapter's own deny failed: exit 2 blocks in most
            reply = Reply(stderr=f"intentd hook: {exc}; then {broken}\n", exit_code=2)
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
