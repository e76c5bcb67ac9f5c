"""One hook call's view of its agent session: the state file, the keeper, the daemon connection,
all waited for within one deadline."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.agents.deadline import Deadline
from intentd.daemon.agents.hooks.adapter import Adapter, HookEvent, Mapped
from intentd.daemon.agents.hooks.keeper import START_TIMEOUT, KeeperFailed, start_keeper
from intentd.daemon.agents.hooks.mapping import command_cwd
from intentd.daemon.agents.hooks.state import AgentSession, LockTimeout, StateFile
from intentd.daemon.client import Client, DaemonUnavailable, RpcError, UntrustedDaemon
from intentd.daemon.trust.sides import hook_agent
from intentd.daemon.utils.workspaces import enclosing_workspace

MAX_MARGIN = 5.0        # of the hook timeout, kept for Python's start, the answer and the exit
ANSWER_MARGIN = 1.0     # the daemon's "no person answered" arrives before the socket gives up
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
    """The session's workspace folder, resolved: --workspace (which must exist), else the first
    existing of: the one the session recorded (it keeps it when cwd changes), the agent's
    project variable, the project root the payload names, the hook's cwd; from any but the
    recorded one, the workspace at or above it."""
    if options.workspace is not None:
        given = Path(options.workspace)
        return str(given.resolve()) if given.is_dir() else None
    named = [os.environ.get(name) for name in adapter.project_dir_env]
    for index, chosen in enumerate((recorded, *named, event.workspace, event.cwd)):
        if chosen and Path(chosen).is_dir():
            folder = Path(chosen).resolve()
            enclosing = None if index == 0 else enclosing_workspace(folder)
            return str(enclosing or folder)
    return None


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
        if self._usable(self.recorded, gone):
            return str(self.recorded.session_id)
        with self.update() as state:
            if self._usable(state, gone):
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

    def _usable(self, state: AgentSession, gone: str | None) -> bool:
        """A recorded daemon session, not gone, of this workspace (a recorded workspace that
        was removed since leaves its session behind)."""
        return bool(state.session_id) and state.session_id != gone \
            and state.workspace == self.workspace

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
