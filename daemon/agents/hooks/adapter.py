"""What one agent's hook adapter supplies: its payload parsed, its tools mapped, its answers."""

# The core (hooks/core.py) runs the same flow for every agent; an Adapter only translates.
# Each agent blocks in its own convention (a JSON deny, exit 2 plus a reason on stderr, ...),
# so every answer is a Reply the adapter builds, never a shape the core knows.

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from intentd.daemon.agents.hooks.install import Installer

EventKind = Literal["pre_tool", "post_tool", "session_start", "session_end", "other"]
DEFAULT_SELECT_HINT = ("Select an intent by running the shell command "
                       "`intentd hook select <INTENT_ID>`.")


class HookInputError(ValueError):
    """The hook input cannot be trusted (not JSON, not an object, fields of the wrong type)."""


@dataclass(frozen=True)
class HookEvent:
    """One hook call, in the agent's terms but with the fields the core needs named alike."""

    kind: EventKind
    name: str                           # the agent's own event name
    session_key: str                    # the agent's session id (conversation, task, ...)
    cwd: str | None = None              # where the agent runs the tool
    workspace: str | None = None        # a project root the payload or environment names
    tool_name: str = ""
    tool_input: Any = None
    call_key: str = ""                  # pairs a post_tool with its pre_tool; "" = derived
    ok: bool = True                     # post_tool: the tool succeeded
    output: str = ""                    # post_tool: its output as text
    hook_timeout: float | None = None   # this event's own timeout, when the agent's differs
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Mapped:
    """What intentd is asked about one tool call."""

    tool: str | None                  # the pipeline tool; None when intentd has no say
    args: dict[str, Any] = field(default_factory=dict)
    read_only: bool = False           # how to fail when the daemon cannot be asked
    select: str | None = None         # an intent selection, handled by the core itself
    more: tuple[Mapped, ...] = ()     # further calls made by the same tool call (a patch of
                                      # several files): each authorized in turn, all or none


@dataclass(frozen=True)
class Reply:
    """What the hook process prints and exits with."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0

    @classmethod
    def json(cls, obj: Any, exit_code: int = 0, stderr: str = "") -> Reply:
        return cls(json.dumps(obj) + "\n", stderr, exit_code)


class Adapter:
    """The base every agent's adapter extends; the defaults suit an agent with no prompt."""

    name: ClassVar[str]                     # CLI word, ledger agent, state folder
    label: ClassVar[str]                    # the agent's name for people
    hook_timeout: ClassVar[float] = 60.0    # the agent's default hook timeout, seconds
    project_dir_env: ClassVar[tuple[str, ...]] = ()
    select_hint: ClassVar[str] = DEFAULT_SELECT_HINT
    shell_tool: ClassVar[str] = "shell"     # what the handshake calls the agent's shell tool
    # The agent drops SessionStart context: the handshake rides on the first allowed tool call
    # instead (and again after an intent-gate refusal).
    handshake_in_tool_context: ClassVar[bool] = False

    def event(self, hook_event: str | None, payload: Any) -> HookEvent:
        """The payload parsed; HookInputError when it cannot be trusted."""
        raise NotImplementedError

    def map_tool(self, tool_name: str, tool_input: Any, cwd: str | None) -> Mapped:
        raise NotImplementedError

    def installer(self) -> Installer | None:
        """How `intentd hook install` wires this agent (imported here only: not a hook's need)."""
        return None

    def native_prompt(self, event: HookEvent) -> bool:
        """Whether `ask` for this event reaches a prompt of the agent's own."""
        return False

    def turn(self, event: HookEvent) -> str | None:
        """The agent turn (one prompt of the person's and what the agent does for it) this call
        belongs to, when the payload names one: the daemon groups the calls of a turn, so a
        person can approve the rest of it at once. None: each call stands alone."""
        return None

    def reports_at_once(self, event: HookEvent) -> bool:
        """Whether no post_tool event will follow this call (a read gate the agent sends no
        "after" for): the core then records the call as done when it allows it."""
        return False

    def allow(self, event: HookEvent, reason: str, context: str | None = None) -> Reply:
        raise NotImplementedError

    def deny(self, event: HookEvent | None, reason: str) -> Reply:
        """Must block in the agent's convention even when `event` is None (unparseable input)."""
        raise NotImplementedError

    def ask(self, event: HookEvent, reason: str) -> Reply:
        return self.deny(event, reason)

    def no_opinion(self, event: HookEvent | None) -> Reply:
        return Reply()

    def context(self, event: HookEvent, text: str) -> Reply:
        return self.no_opinion(event)

    def answer_ignored(self, event: HookEvent) -> bool:
        """Whether the agent ignores this post_tool event's answer (a fire-and-forget report):
        what the answer would tell then waits for the same call's next report (same call key),
        whose answer the agent reads."""
        return False

    def reported(self, event: HookEvent, message: str | None) -> Reply:
        """The answer to a post_tool call; `message` says which changes the scope audit undid."""
        return self.no_opinion(event) if message is None else self.context(event, message)


def derived_call_key(tool_name: Any, tool_input: Any) -> str:
    """A call's key when the agent gives it no id: the same call gives the same key."""
    import hashlib  # here: most agents send an id, and the import costs every hook call ~3 ms

    call = json.dumps([tool_name, tool_input], sort_keys=True, default=str)
    return "call-" + hashlib.sha256(call.encode()).hexdigest()[:24]


def text_field(payload: Mapping[str, Any], *names: str) -> str | None:
    """The first of `names` that is a non-empty string in the payload."""
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value:
            return value
    return None
