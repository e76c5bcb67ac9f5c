"""Stage 1: the tool exists, its arguments are sound text and match its schema, its paths resolve."""

from __future__ import annotations

from typing import Any

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.tools.base import ToolKind
from intentd.daemon.tools.registry import BUILTIN_TOOLS, lookup
from intentd.daemon.tools.schema import SchemaError, validate
from intentd.daemon.utils.paths import PathRefused, resolve


class ValidateStage:
    name = "validate"

    def check(self, ctx: CallContext) -> Decision | None:
        if not isinstance(ctx.name, str) or not ctx.name:
            return Decision.deny(self.name, "the call has no tool name")
        if not _encodable(ctx.name):
            ctx.name = printable(ctx.name)
        tool = lookup(ctx.name)
        if tool is None:
            known = ", ".join(BUILTIN_TOOLS)
            return Decision.deny(self.name, f"unknown tool {ctx.name[:100]!r}; known tools: {known}")
        if not isinstance(ctx.args, dict):
            return Decision.deny(self.name, f"{tool.name}: arguments must be a JSON object")
        problem = unsound(ctx.args)
        if problem:
            ctx.args = printable(ctx.args)  # only recorded from here on: the ledger line must encode
            return Decision.deny(self.name, f"{tool.name}: invalid arguments: {problem}")
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


MAX_DEPTH = 64  # deeper arguments are no tool's; refusing them keeps every later walk shallow


def unsound(args: dict[str, Any]) -> str | None:
    """Why the arguments cannot be taken as JSON text: a lone surrogate in any string or key
    (it passes json.loads but can never be written as UTF-8), or nesting past MAX_DEPTH."""
    stack: list[tuple[Any, str, int]] = [(args, "args", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"{where} is nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, str):
            if not _encodable(value):
                return f"{where} is not valid Unicode (it holds a lone surrogate); send UTF-8 text"
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                if isinstance(key, str) and not _encodable(key):
                    return f"a key of {where} is not valid Unicode (it holds a lone surrogate)"
                stack.append((item, f"{where}.{str(key)[:50]}", depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in reversed(
                list(enumerate(value))))
    return None


def printable(value: Any, depth: int = 0) -> Any:
    """A copy that can be encoded: lone surrogates shown as \\udcff escapes, depth cut off."""
    if isinstance(value, str):
        return value if _encodable(value) else value.encode("utf-8", "backslashreplace").decode()
    if depth >= MAX_DEPTH:
        return "..." if isinstance(value, dict | list) else value
    if isinstance(value, dict):
        return {printable(str(k)): printable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [printable(v, depth + 1) for v in value]
    return value


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
