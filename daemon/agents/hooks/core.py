"""`intentd hook claude-code`: Claude Code's tool hooks, answered by the pipeline."""

# PreToolUse → `tools/authorize`, answered with hookSpecificOutput.permissionDecision (allow,
# deny, or "ask" when no approver is connected: Claude Code's own prompt asks); PostToolUse
# → `tools/report`. Fails closed: when the daemon cannot be asked or anything goes wrong, a
# call that may change something is denied, and a read is handed to Claude Code's own prompt.
# Every wait (connect, keeper start, state lock, a person's answer) ends by one deadline set
# under Claude Code's hook timeout: a hook Claude Code kills lets the call through.

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.agents.claude_keeper import START_TIMEOUT, KeeperFailed, start_keeper
from intentd.daemon.agents.claude_state import ClaudeSession, LockTimeout, StateFile
from intentd.daemon.agents.claude_tools import Mapped, command_cwd, map_call
from intentd.daemon.agents.deadline import Deadline, DeadlineExceeded
from intentd.daemon.client import Client, DaemonUnavailable, RpcError, UntrustedDaemon
from intentd.daemon.trust.sides import hook_agent

MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_MARGIN = 5.0        # of the hook timeout, kept for Python's start, the answer and the exit
ANSWER_MARGIN = 1.0     # the daemon's "no person answered" arrives before the socket gives up
LISTING_TIMEOUT = 5.0   # SessionStart's intent list is a nicety: no long wait for it
SELECT_HINT = ("In Claude Code, select an intent by running the Bash command "
               "`intentd hook select <INTENT_ID>`.")
LOCK_WAIT = "waiting for the session's state file (another process holds its lock)"


class HookFailed(Exception):
    """The pipeline could not be asked; the message is the reason given to Claude Code."""


def hook_deadline(hook_timeout: float) -> Deadline:
    """Claude Code's timeout less a margin (a quarter of it when it is short)."""
    return Deadline.after(hook_timeout - min(MAX_MARGIN, hook_timeout / 4))


def decision(verdict: str, reason: str, context: str | None = None) -> dict[str, Any]:
    output: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": verdict,
                              "permissionDecisionReason": reason}
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def fail_closed(mapped: Mapped | None, why: str, hint: str = "") -> dict[str, Any]:
    if mapped is not None and mapped.read_only:
        return decision("ask", f"intentd could not check this read ({why}); approve it yourself")
    return decision("deny", f"intentd refused this call because it could not check it ({why})"
                            f"{hint}")


def workspace_of(args: argparse.Namespace, event: dict[str, Any],
                 recorded: str | None = None) -> str | None:
    """The session's workspace folder, resolved: --workspace, else the one the session recorded
    (it keeps it when cwd changes), else $CLAUDE_PROJECT_DIR, else the hook's cwd."""
    chosen = (args.workspace or recorded or os.environ.get("CLAUDE_PROJECT_DIR")
              or event.get("cwd"))
    if not chosen or not Path(chosen).is_dir():
        return None
    return str(Path(chosen).resolve())


class HookSession:
    """One hook call's view of its Claude Code session: the state file, read once outside its
    lock, and a daemon connection opened by the first call that needs it."""

    def __init__(self, args: argparse.Namespace, event: dict[str, Any], deadline: Deadline):
        key = str(event.get("session_id") or "")
        if not key:
            raise HookFailed("the hook input has no session_id")
        self.args, self.event, self.deadline = args, event, deadline
        self.state = StateFile(key)
        self.intent_note: str | None = None  # why a new keeper could not select the intent again
        self._client: Client | None = None
        self._initialized = False

    @cached_property
    def recorded(self) -> ClaudeSession:
        return self.state.read()

    @cached_property
    def workspace(self) -> str | None:
        return workspace_of(self.args, self.event, self.recorded.workspace)

    def map(self) -> Mapped:
        cwd = self.event.get("cwd") if isinstance(self.event.get("cwd"), str) else None
        if self.workspace is not None:
            cwd = command_cwd(cwd, self.workspace)
        return map_call(str(self.event.get("tool_name") or ""), self.event.get("tool_input"), cwd)

    @contextmanager
    def update(self) -> Iterator[ClaudeSession]:
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
                raise HookFailed(f"no workspace folder (cwd {self.event.get('cwd')!r})")
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
            info: dict[str, Any] = start_keeper(self.args.socket, workspace, self.state.path,
                                                intent_id, timeout=budget)
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
            client = Client(self.args.socket,
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
                self.args.socket, timeout=self.deadline.budget(connecting)).connect()
            self._client = client
            client.timeout = self.deadline.budget(connecting)
            try:
                # Claude Code's process: everything it starts is the agent's side from now on.
                client.initialize("intentd-hook-claude-code", agent_process=hook_agent())
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


def pre_tool_use(hook: HookSession, event: dict[str, Any], mapped: Mapped) -> dict[str, Any]:
    if mapped.select is not None:
        return select_intent(hook, mapped.select)
    if mapped.tool is None:
        return {}  # no opinion: Claude Code's own permissions decide
    # native_prompt: with no approver connected, the daemon answers "ask" at once and Claude
    # Code's own permission prompt asks the person; its PostToolUse then records their yes.
    answer = hook.call(protocol.TOOLS_AUTHORIZE, {"tool": mapped.tool, "args": mapped.args,
                                                  "native_prompt": True},
                       approval_timeout=hook.args.approval_timeout)
    if answer.get("decision") == "ask":
        with hook.update() as state:
            state.pending[call_key(event)] = str(answer["call_id"])
        return decision("ask", hook.noted(f"intentd: {answer.get('reason')}"))
    if answer.get("decision") != "allow":
        reason = str(answer.get("reason") or "refused")
        if answer.get("stage") == "intent_gate":
            reason = f"{reason} {SELECT_HINT}"
        return decision("deny", hook.noted(f"intentd ({answer.get('stage')}): {reason}"))
    with hook.update() as state:
        state.pending[call_key(event)] = str(answer["call_id"])
    return decision("allow", hook.noted(f"intentd: {answer.get('reason')}"))


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
    with hook.update() as state:  # popped before any connection: most calls need none
        call_id = state.pending.pop(call_key(event), None)
        session_id = state.session_id
    if call_id is None or session_id is None:
        return {}  # nothing was authorized for it (a neutral tool, or the keeper restarted)
    failed = event.get("hook_event_name") == "PostToolUseFailure"
    response = event.get("tool_response", event.get("error"))
    ok = not failed and succeeded(response)
    output = response if isinstance(response, str) else json.dumps(response, default=str)
    try:
        answer = hook.send(protocol.TOOLS_REPORT, {"session_id": session_id, "call_id": call_id,
                                                   "ok": ok, "output": output[:100_000]})
    except RpcError as exc:  # its session is gone: the daemon recorded it as never reported
        print(f"intentd hook: the report was not recorded: {exc.message}", file=sys.stderr)
        return {}
    audit = answer.get("scope_audit") if isinstance(answer, dict) else None
    if not isinstance(audit, dict):
        return {}
    # the scope audit undid changes outside the intent: Claude is told which, path by path
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                   "additionalContext": str(audit.get("message", ""))}}


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


def session_start(args: argparse.Namespace, event: dict[str, Any],
                  deadline: Deadline) -> dict[str, Any]:
    """At the start of a session, the agent learns the handshake and the intents to pick from."""
    # Imported here: engine.intents brings yaml and pathspec, ~50 ms every tool call would pay.
    from intentd.daemon.agents.prompt import claude_code_handshake
    from intentd.daemon.engine.intents import INTENTS_FILE

    key = str(event.get("session_id") or "")
    root = workspace_of(args, event, StateFile(key).read().workspace if key else None)
    if root is None or not (Path(root) / INTENTS_FILE).is_file():
        return {}
    try:
        timeout = deadline.budget("listing the intents", cap=LISTING_TIMEOUT)
        with Client(args.socket, timeout=timeout) as client:
            client.initialize("intentd-hook-claude-code", agent_process=hook_agent())
            listing = client.call(protocol.INTENTS_LIST, {"workspace": root})
        intents = list(listing.get("intents") or [])
    except (DaemonUnavailable, RpcError, OSError):  # TimeoutError, DeadlineExceeded included
        intents = []  # the gate will list them in its refusal
    return {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                   "additionalContext": claude_code_handshake(intents)}}


def handle(args: argparse.Namespace, event: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
    name = event.get("hook_event_name")
    if name == "SessionStart":
        return session_start(args, event, deadline)
    if name == "SessionEnd":
        return session_end(event)
    if name not in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        return {}
    hook = HookSession(args, event, deadline)
    try:
        if name != "PreToolUse":
            return post_tool_use(hook, event)
        mapped = hook.map()
        try:
            return pre_tool_use(hook, event, mapped)
        except Exception as exc:
            return _failure(event, exc, mapped)
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
    deadline = hook_deadline(args.hook_timeout)
    event: dict[str, Any] = {}
    try:
        event = read_event(sys.stdin)
        answer = handle(args, event, deadline)
    except Exception as exc:  # before the call was mapped: it is judged as destructive
        answer = _failure(event, exc, None)
    if answer:
        sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0


def _failure(event: dict[str, Any], exc: Exception, mapped: Mapped | None) -> dict[str, Any]:
    if event.get("hook_event_name") not in (None, "PreToolUse"):
        print(f"intentd hook: {exc}", file=sys.stderr)
        return {}
    if isinstance(exc, UntrustedDaemon):  # someone else's socket: deny, reads included
        return decision("deny", f"intentd refused this call: {exc}")
    if mapped is not None and mapped.tool is None and mapped.select is None:
        return {}  # a tool intentd has no say on is not blocked by intentd's trouble
    if isinstance(exc, (DaemonUnavailable, HookFailed, DeadlineExceeded)):
        why = str(exc)
    elif isinstance(exc, (TimeoutError, OSError)):
        why = f"the daemon did not answer: {exc}"
    else:
        why = f"{type(exc).__name__}: {exc}"
    hint = ("; destructive tools stay blocked until `intentd serve` runs"
            if isinstance(exc, DaemonUnavailable) else "")
    return fail_closed(mapped, why, hint)
