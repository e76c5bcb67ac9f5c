"""The pipeline's decision stages, one small class per module, in DESIGN.md's order."""

from __future__ import annotations

from typing import Protocol

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision


class Stage(Protocol):
    """A stage looks at a call and refuses it, asks for a person, or passes (None)."""

    name: str

    def check(self, ctx: CallContext) -> Decision | None: ...
