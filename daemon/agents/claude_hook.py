"""`intentd hook claude-code`: Claude Code's tool hooks, answered by the pipeline."""

# PreToolUse → `tools/authorize`, answered with hookSpecificOutput.permissionDecision; PostToolUse
# → `tools/report`. Fails closed: when the daemon cannot be asked or anything goes wrong, a
# call that may change something is denied, and a read is handed to Claude Code's own prompt.

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.agents.claude_keeper import KeeperFailed, start_keeper
from intentd.daemon.agents.claude_state import StateFile
from intentd.daemon.agents.claude_tools import Mapped, command_cwd, map_call
from intentd.daemon.agents.prompt import INTENTS_FILE, claude_code_handshake
from intentd.daemon.client import Client, DaemonUnavailable, RpcError

MAX_INPUT_BYTES = 64 * 1024 * 1024
SELECT_HINT = ("In Claude Code, select an intent by running the Bash command "
               "`intentd hook select <INTENT_ID>`.")


class HookFailed(Exception):
    """The pipeline could not be asked; the message is the reason given to Claude Code."""


def decision(verdict: str, reason: str, context: str | None = None) -> dict[str, Any]:
    output: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": verdict,
                              "permissionDecisionReason": reason}
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def fail_closed(mapped: Mapped | None, why: str) -> dict[str, Any]:
    if mapped is not None and mapped.read_only:
        return decision("ask", f"intentd could not check this read ({why}); approve it yourself")
    return decision("deny", f"intentd refused this call because it could not check it ({why}); "
                            "destructive tools stay blocked until `intentd serve` runs")


class HookSession:
    """One hook call's view of its Claude Code session: the state file and a daemon connection."""

    def __init__(self, args: argparse.Namespace, event: dict[str, Any]) -> None:
        key = str(event.get("session_id") or "")
        if not key:
            raise HookFailed("the hook input has no session_id")
        self.state = StateFile(key)
        self.socket: Path | None = args.socket
        self.timeout: float = args.approval_timeout
        self.workspace = self._workspace(args, event)
        self.client = Client(self.socket, timeout=10)

    def _workspace(self, args: argparse.Namespace, event: dict[str, Any]) -> str:
        recorded = self.state.read().workspace  # a session keeps its workspace when cwd changes
        chosen = (args.workspace or recorded or os.environ.get("CLAUDE_PROJECT_DIR")
                  or event.get("cwd"))
        if not chosen or not Path(chosen).is_dir():
            raise HookFailed(f"no workspace folder (cwd {event.get('cwd')!r})")
        return str(Path(chosen).resolve())

    def connect(self) -> None:
        self.client.connect()
        self.client.initialize("intentd-hook-claude-code")

    def session_id(self, gone: str | None = None) -> str:
        """The daemon session the keeper holds; a new keeper when there is none, or when the
        recorded one is `gone` (another hook call may have replaced it already)."""
        with self.state.locked() as state:
            if state.session_id and state.session_id != gone:
                return str(state.session_id)
            try:
                info = start_keeper(self.socket, self.workspace, self.state.path, state.intent_id)
            except KeeperFailed as exc:
                raise HookFailed(str(exc)) from None
            state.workspace, state.session_id = self.workspace, str(info["session_id"])
            state.keeper_pid, state.intent_id = int(info["pid"]), info.get("intent_id")
            state.socket, state.pending = str(self.socket or ""), {}
            return str(state.session_id)

    def call(self, method: str, params: dict[str, Any], timeout: float | None = 10) -> Any:
        """A session call; when the keeper is gone (unknown session), once more with a new one."""
        session_id = self.session_id()
        try:
            return self.client.call(method, {"session_id": session_id, **params}, timeout=timeout)
        except RpcError as exc:
            if exc.code != protocol.UNKNOWN_SESSION:
                raise
        return self.client.call(method, {"session_id": self.session_id(gone=session_id), **params},
                                timeout=timeout)

    def update(self) -> Any:
        return self.state.locked()

    def close(self) -> None:
        self.client.close()


def pre_tool_use(hook: HookSession, event: dict[str, Any]) -> dict[str, Any]:
    cwd = command_cwd(event.get("cwd"), hook.workspace)
    mapped = map_call(str(event.get("tool_name") or ""), event.get("tool_input"), cwd)
    if mapped.select is not None:
        return select_intent(hook, mapped.select)
    if mapped.tool is None:
        return {}  # no opinion: Claude Code's own permissions decide
    # The socket timeout stays under Claude Code's hook timeout: a hook killed there fails open.
    answer = hook.call(protocol.TOOLS_AUTHORIZE, {"tool": mapped.tool, "args": mapped.args,
                                                  "approval_timeout": hook.timeout},
                       timeout=hook.timeout + 5)
    if answer.get("decision") != "allow":
        reason = str(answer.get("reason") or "refused")
        if answer.get("stage") == "intent_gate":
            reason = f"{reason} {SELECT_HINT}"
        return decision("deny", f"intentd ({answer.get('stage')}): {reason}")
    with hook.update() as state:
        state.pending[call_key(event)] = str(answer["call_id"])
    return decision("allow", f"intentd: {answer.get('reason')}")


def call_key(event: dict[str, Any]) -> str:
    """Pairs a PostToolUse with its PreToolUse: the tool_use_id, else the call itself."""
    if event.get("tool_use_id"):
        return str(event["tool_use_id"])
    call = json.dumps([event.get("tool_name"), event.get("tool_input")], sort_keys=True, default=str)
    return "call-" + hashlib.sha256(call.encode()).hexdigest()[:24]


def select_intent(hook: HookSession, intent_id: str) -> dict[str, Any]:
    answer = hook.call(protocol.INTENTS_SELECT, {"intent_id": intent_id})
    verdict = answer.get("decision") or {}
    if verdict.get("decision") != "allow":
        return decision("deny", f"intentd ({verdict.get('stage')}): {verdict.get('reason')}")
    with hook.update() as state:
        state.intent_id = intent_id
    return decision("allow", f"intentd: intent {intent_id} selected for this Claude Code session",
                    context=answer.get("context"))


def post_tool_use(hook: HookSession, event: dict[str, Any]) -> dict[str, Any]:
    with hook.update() as state:
        call_id = state.pending.pop(call_key(event), None)
        session_id = state.session_id
    if call_id is None or session_id is None:
        return {}  # nothing was authorized for it (a neutral tool, or the keeper restarted)
    failed = event.get("hook_event_name") == "PostToolUseFailure"
    response = event.get("tool_response", event.get("error"))
    ok = not failed and succeeded(response)
    output = response if isinstance(response, str) else json.dumps(response, default=str)
    try:
        hook.client.call(protocol.TOOLS_REPORT, {"session_id": session_id, "call_id": call_id,
                                                 "ok": ok, "output": output[:100_000]})
    except RpcError as exc:  # its session is gone: the daemon recorded it as never reported
        print(f"intentd hook: the report was not recorded: {exc.message}", file=sys.stderr)
    return {}


def succeeded(response: Any) -> bool:
    if isinstance(response, dict):
        return not (response.get("success") is False or response.get("is_error")
                    or response.get("interrupted"))
    return True


def session_end(event: dict[str, Any]) -> dict[str, Any]:
    """Claude Code ended the session: its keeper stops (the state file going away tells it)."""
    key = str(event.get("session_id") or "")
    if key:
        StateFile(key).remove()
    return {}


def session_start(args: argparse.Namespace, event: dict[str, Any]) -> dict[str, Any]:
    """At the start of a session, the agent learns the handshake and the intents to pick from."""
    root = Path(args.workspace or os.environ.get("CLAUDE_PROJECT_DIR") or event.get("cwd") or ".")
    if not (root / INTENTS_FILE).is_file():
        return {}
    try:
        with Client(args.socket, timeout=5) as client:
            listing = client.call(protocol.INTENTS_LIST, {"workspace": str(root.resolve())})
        intents = list(listing.get("intents") or [])
    except (DaemonUnavailable, RpcError, TimeoutError, OSError):
        intents = []  # the gate will list them in its refusal
    return {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                   "additionalContext": claude_code_handshake(intents)}}


def handle(args: argparse.Namespace, event: dict[str, Any]) -> dict[str, Any]:
    name = event.get("hook_event_name")
    if name == "SessionStart":
        return session_start(args, event)
    if name == "SessionEnd":
        return session_end(event)
    if name not in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        return {}
    hook = HookSession(args, event)
    try:
        hook.connect()
        return pre_tool_use(hook, event) if name == "PreToolUse" else post_tool_use(hook, event)
    finally:
        hook.close()


def read_event(stream: Any) -> dict[str, Any]:
    raw = stream.buffer.read(MAX_INPUT_BYTES + 1) if hasattr(stream, "buffer") else stream.read()
    if len(raw) > MAX_INPUT_BYTES:
        raise HookFailed("the hook input is too large")
    event = json.loads(raw)
    if not isinstance(event, dict):
        raise HookFailed("the hook input is not a JSON object")
    return event


def run(args: argparse.Namespace) -> int:
    """Always exit 0 with one JSON answer: Claude Code reads decisions only from exit 0."""
    event: dict[str, Any] = {}
    try:
        event = read_event(sys.stdin)
        answer = handle(args, event)
    except Exception as exc:
        answer = _failure(event, exc)
    if answer:
        sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0


def _failure(event: dict[str, Any], exc: Exception) -> dict[str, Any]:
    if event.get("hook_event_name") not in (None, "PreToolUse"):
        print(f"intentd hook: {exc}", file=sys.stderr)
        return {}
    mapped = None
    try:
        mapped = map_call(str(event.get("tool_name") or ""), event.get("tool_input"))
    except Exception:
        pass
    if mapped is not None and mapped.tool is None and mapped.select is None:
        return {}  # a tool intentd has no say on is not blocked by intentd's trouble
    if isinstance(exc, (DaemonUnavailable, HookFailed)):
        why = str(exc)
    elif isinstance(exc, (TimeoutError, OSError)):
        why = f"the daemon did not answer: {exc}"
    else:
        why = f"{type(exc).__name__}: {exc}"
    return fail_closed(mapped, why)

