"""A grant's shape (a command prefix, or a tool on a path pattern) and whether a call fits it."""

# A grant is made from a pending call the person has in front of them, never from text a client
# types: a command prefix comes from the analysed simple commands, a path pattern must cover
# every path of that call. It answers only the "ask a person" step (see grantable()).

from __future__ import annotations

import itertools
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from intentd.daemon.engine.context import CallContext
from intentd.daemon.policy.command.types import SimpleCommand
from intentd.daemon.policy.globs import PatternList
from intentd.daemon.tools.base import ToolKind

SESSION, WORKSPACE = "session", "workspace"
COMMAND, PATH = "command", "path"
LIFETIMES, SHAPES = (SESSION, WORKSPACE), (COMMAND, PATH)
SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,40}")
MAX_PATTERN = 300
_ids = itertools.count(1)


class GrantRefused(ValueError):
    """This call cannot be remembered in that shape; the message says why."""


def new_grant_id() -> str:
    return f"g-{next(_ids)}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Grant:
    workspace: str
    lifetime: str                       # session | workspace
    shape: str                          # command | path
    prefixes: tuple[tuple[str, ...], ...] = ()  # command: argv prefixes, one per simple command
    tool: str | None = None             # path: the tool it lets through
    pattern: str | None = None          # path: a gitignore-style pattern, workspace-relative
    session_id: str | None = None       # session lifetime: the session it belongs to
    origin: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_grant_id)
    created_at: float = field(default_factory=time.time)

    def describe(self) -> str:
        if self.shape == COMMAND:
            what = " or ".join(f"`{' '.join(p)}`" for p in self.prefixes) + " (and its arguments)"
        else:
            what = f"{self.tool} on {self.pattern}"
        return f"{what}, {'this session' if self.lifetime == SESSION else 'this workspace'}"

    def fits(self, ctx: CallContext) -> bool:
        if self.workspace != ctx.root:
            return False
        if self.lifetime == SESSION and self.session_id != ctx.session.id:
            return False
        return _fits_command(self, ctx) if self.shape == COMMAND else _fits_path(self, ctx)

    def policy_rule(self) -> str | None:
        """The same permission as policy.yaml text, for a person who wants it under version
        control; a path grant has no policy rule of that exact shape."""
        if self.shape != COMMAND:
            return None
        lines = ["commands:", "  allow:"]
        for prefix in self.prefixes:
            text = " ".join(prefix)
            lines += [f"    - {_yaml_quote(text)}", f"    - {_yaml_quote(text + ' *')}"]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "workspace": self.workspace, "lifetime": self.lifetime,
                "shape": self.shape, "prefixes": [list(p) for p in self.prefixes],
                "tool": self.tool, "pattern": self.pattern, "session_id": self.session_id,
                "origin": dict(self.origin), "created_at": self.created_at,
                "description": self.describe(), "policy_rule": self.policy_rule()}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Grant:
        """A saved grant; anything odd raises (the caller skips it: a grant never widens by
        accident)."""
        lifetime, shape = raw["lifetime"], raw["shape"]
        if lifetime not in LIFETIMES or shape not in SHAPES:
            raise ValueError("unknown lifetime or shape")
        prefixes = tuple(tuple(str(w) for w in p) for p in raw.get("prefixes") or ())
        if shape == COMMAND and (not prefixes or not all(prefixes)):
            raise ValueError("a command grant needs prefixes")
        if shape == PATH and not (isinstance(raw.get("tool"), str)
                                  and _pattern_problem(raw.get("pattern")) is None):
            raise ValueError("a path grant needs a tool and a pattern")
        origin = raw.get("origin")
        return cls(str(raw["workspace"]), lifetime, shape, prefixes, raw.get("tool"),
                   raw.get("pattern"), raw.get("session_id"),
                   origin if isinstance(origin, dict) else {}, str(raw["id"]),
                   float(raw.get("created_at") or 0))


def grantable(ctx: CallContext) -> str | None:
    """Why no grant may answer this call (None: one may). A grant never answers what a policy
    `ask` rule, an unanalysable command or a path outside the workspace (or ignored) sends to a
    person: those ask every time."""
    if ctx.must_ask:
        return f"a person is asked every time: {ctx.must_ask}"
    if ctx.not_auto:
        return f"a person is asked every time: {ctx.not_auto[0]}"
    if ctx.kind is ToolKind.COMMAND:
        verdict = ctx.command()
        if verdict is None or not verdict.analysis.parsed or verdict.analysis.opaque:
            return "the command cannot be fully analysed"
    return None


def derive_grant(ctx: CallContext, lifetime: str, shape: str, pattern: str | None,
                 origin: dict[str, Any]) -> Grant:
    """The grant a person asked for from the pending call `ctx`."""
    if lifetime not in LIFETIMES:
        raise GrantRefused(f"lifetime must be one of: {', '.join(LIFETIMES)}")
    if shape not in SHAPES:
        raise GrantRefused(f"shape must be one of: {', '.join(SHAPES)}")
    why_not = grantable(ctx)
    if why_not:
        raise GrantRefused(why_not)
    session_id = ctx.session.id if lifetime == SESSION else None
    if shape == COMMAND:
        return Grant(ctx.root, lifetime, COMMAND, command_prefixes(ctx), session_id=session_id,
                     origin=origin)
    if ctx.kind not in (ToolKind.EDIT, ToolKind.READ) or not ctx.paths:
        raise GrantRefused("a path grant is for file tools; use a command grant for commands")
    relatives = [p.relative for p in ctx.paths]
    if any(r is None for r in relatives):
        raise GrantRefused("the call names a path outside the workspace")
    chosen = pattern if pattern is not None else (relatives[0] if len(relatives) == 1 else None)
    problem = _pattern_problem(chosen)
    if problem or chosen is None:
        raise GrantRefused(problem or "name a pattern that covers every path of the call")
    if not all(_compiled(chosen).matches(str(r)) for r in relatives):
        raise GrantRefused(f"pattern {chosen!r} does not cover every path of the call")
    return Grant(ctx.root, lifetime, PATH, tool=str(ctx.name), pattern=chosen,
                 session_id=session_id, origin=origin)


def command_prefixes(ctx: CallContext) -> tuple[tuple[str, ...], ...]:
    """One prefix per simple command that is not read-only: its program, and its sub-command
    when the second word is a plain word (`npm test`, `git commit`, `make build`)."""
    verdict = ctx.command()
    if verdict is None:
        raise GrantRefused("a command grant is for execute_command; use a path grant for files")
    prefixes: list[tuple[str, ...]] = []
    for simple in verdict.analysis.commands:
        if simple.read_only:
            continue
        if not _plain(simple):
            raise GrantRefused(f"`{simple.text[:80]}` takes arguments only known when it runs")
        words = simple.argv[:2] if len(simple.argv) > 1 and SUBCOMMAND.fullmatch(
            simple.argv[1]) else simple.argv[:1]
        if words and words not in prefixes:
            prefixes.append(tuple(words))
    if not prefixes:
        raise GrantRefused("the command only reads; turn on safe_commands instead")
    return tuple(prefixes)


def _fits_command(grant: Grant, ctx: CallContext) -> bool:
    verdict = ctx.command()
    if verdict is None or not verdict.analysis.parsed or verdict.analysis.opaque:
        return False
    matched = False
    for simple in verdict.analysis.commands:
        if any(simple.argv[:len(p)] == p for p in grant.prefixes) and _plain(simple):
            matched = True
        elif not simple.read_only:
            return False  # every part that changes something must be granted
    return matched


def _fits_path(grant: Grant, ctx: CallContext) -> bool:
    if ctx.name != grant.tool or not ctx.paths or grant.pattern is None:
        return False
    patterns = _compiled(grant.pattern)
    return all(p.relative is not None and patterns.matches(p.relative) for p in ctx.paths)


def _compiled(pattern: str) -> PatternList:
    """Anchored at the workspace root: `a.py` is the top-level a.py only (in gitignore a bare
    name matches in every folder); `**/a.py` says "anywhere" when that is what is meant."""
    return PatternList(["/" + pattern.lstrip("/")])


def _plain(simple: SimpleCommand) -> bool:
    return not (simple.opaque or simple.open_prefix is not None or simple.runs_suffix)


def _pattern_problem(pattern: Any) -> str | None:
    if not isinstance(pattern, str) or not pattern.strip():
        return "the pattern is empty"
    if len(pattern) > MAX_PATTERN or "\n" in pattern or pattern.startswith("!"):
        return "the pattern must be one line, not a negation, at most 300 characters"
    if ".." in pattern.split("/"):
        return "the pattern is relative to the workspace root, with no .."
    return None


def _yaml_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
