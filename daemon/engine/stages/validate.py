"""Stage 1: the tool exists, its arguments match its schema, its paths resolve."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.paths import PathRefused, resolve
from intentd.daemon.tools.base import ToolKind
from intentd.daemon.tools.registry import BUILTIN_TOOLS, lookup
from intentd.daemon.tools.schema import SchemaError, validate


class ValidateStage:
    name = "validate"

    def check(self, ctx: CallContext) -> Decision | None:
        if not isinstance(ctx.name, str) or not ctx.name:
            return Decision.deny(self.name, "the call has no tool name")
        tool = lookup(ctx.name)
        if tool is None:
            known = ", ".join(BUILTIN_TOOLS)
            return Decision.deny(self.name, f"unknown tool {ctx.name[:100]!r}; known tools: {known}")
        if not isinstance(ctx.args, dict):
            return Decision.deny(self.name, f"{tool.name}: arguments must be a JSON object")
        try:
            validate(ctx.args, tool.schema)
        except SchemaError as exc:
            return Decision.deny(self.name, f"{tool.name}: invalid arguments: {exc}")
        problem = tool.check(ctx.args) if tool.check else None
        if problem:
            return Decision.deny(self.name, f"{tool.name}: invalid arguments: {problem}")
        ctx.tool = tool
        try:
            ctx.paths = tuple(resolve(ctx.root, raw) for raw in tool.paths(ctx.args))
        except PathRefused as exc:
            return Decision.deny(self.name, f"{tool.name}: {exc}")
        if tool.kind is ToolKind.COMMAND:
            ctx.cwd = ctx.paths[0]
            if not ctx.cwd.inside:
                return Decision.deny(self.name, f"cwd {ctx.cwd.raw!r} is outside the workspace")
        return None
