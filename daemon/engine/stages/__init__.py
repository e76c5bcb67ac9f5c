"""The pipeline's decision stages, one small class per module; their order is in pipeline.py."""

# A stage reads the call's context and returns its word; it never writes the context, the
# session or another stage's state. What it finds for the stages after it (the resolved tool
# and paths, the selected intent, why a person must decide) comes back as a Finding, which the
# pipeline takes into the context before the next stage runs. What counting the call would
# change in the session (repetition, the run of auto-approvals) comes back as a Tally, which
# the session takes once, when the call is counted: deciding a call twice counts it never.

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.session import Tally

if TYPE_CHECKING:
    from intentd.daemon.engine.context import CallContext
    from intentd.daemon.engine.intents import Intent
    from intentd.daemon.tools.base import Tool
    from intentd.daemon.utils.paths import ResolvedPath


@dataclass(slots=True)
class Finding:
    """A stage's word on a call (`decision`, None to let it pass) and what it found on the way.
    A value: made by the stage, read by the pipeline, never changed (not frozen only because a
    frozen dataclass costs three times as much to make, and every call makes several)."""

    decision: Decision | None = None
    # validate: the call as resolved; the name and arguments as they can be recorded
    name: str | None = None
    args: Any = None
    tool: Tool | None = None
    paths: tuple[ResolvedPath, ...] | None = None
    cwd: ResolvedPath | None = None
    intent: Intent | None = None       # intent_gate: the selected intent, for scope
    must_ask: str | None = None        # a person decides, every time: no auto-approval, no grant
    not_auto: tuple[str, ...] = ()     # reasons auto-approval is off for this call
    tally: Tally | None = None         # what counting the call changes in its session


class Stage(Protocol):
    """A stage looks at a call and refuses it, asks for a person, or passes (None)."""

    name: str

    def check(self, ctx: CallContext) -> Decision | Finding | None: ...
