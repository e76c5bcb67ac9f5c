"""Stage 1: the tool exists, its arguments are sound text and match its schema, its paths resolve."""

from __future__ import annotations

from typing import Any

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.stages import Finding
from intentd.daemon.tools.base import Tool, ToolKind
from intentd.daemon.tools.registry import BUILTIN_TOOLS, lookup
from intentd.daemon.tools.schema import SchemaError, validate
from intentd.daemon.utils.paths import PathRefused, resolve


class ValidateStage:
    name = "validate"

    def check(self, ctx: CallContext) -> Finding:
        """Refuses, or passes with the call resolved: its tool, paths and cwd. A name or
        arguments that cannot be encoded come back printable: only that copy is recorded."""
        if not isinstance(ctx.name, str) or not ctx.name:
            return Finding(Decision.deny(self.name, "the call has no tool name"))
        name = ctx.name if _encodable(ctx.name) else printable(ctx.name)
        renamed = name if name != ctx.name else None
        tool = lookup(name)
        if tool is None:
            known = ", ".join(BUILTIN_TOOLS)
            return Finding(Decision.deny(self.name, f"unknown tool {name[:100]!r}; known tools: "
                                                    f"{known}"), name=renamed)
        if not isinstance(ctx.args, dict):
            return Finding(Decision.deny(self.name, f"{tool.name}: arguments must be a JSON "
                                                    "object"), name=renamed)
        problem = unsound(ctx.args)
        if problem:
            return Finding(Decision.deny(self.name, f"{tool.name}: invalid arguments: {problem}"),
                           name=renamed, args=printable(ctx.args))
        refusal = _invalid(tool, ctx.args)
        if refusal:
            return Finding(Decision.deny(self.name, refusal), name=renamed)
        try:
            paths = tuple(resolve(ctx.root, raw) for raw in tool.paths(ctx.args))
        except PathRefused as exc:
            return Finding(Decision.deny(self.name, f"{tool.name}: {exc}"), name=renamed)
        cwd = paths[0] if tool.kind is ToolKind.COMMAND else None
        if cwd is not None and not cwd.inside:
            return Finding(Decision.deny(self.name, f"cwd {cwd.raw!r} is outside the workspace"),
                           name=renamed)
        return Finding(name=renamed, tool=tool, paths=paths, cwd=cwd)


def _invalid(tool: Tool, args: dict[str, Any]) -> str | None:
    try:
        validate(args, tool.schema)
    except SchemaError as exc:
        return f"{tool.name}: invalid arguments: {exc}"
    problem = tool.check(args) if tool.check else None
    return f"{tool.name}: invalid arguments: {problem}" if problem else None


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
