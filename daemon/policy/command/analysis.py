"""Analyse a shell command string: every simple command it runs, what it writes, whether it only reads."""

from __future__ import annotations

import functools

from intentd.daemon.policy.command.resolve import Findings, Resolver
from intentd.daemon.policy.command.types import CommandAnalysis, Redirect, SimpleCommand
from intentd.daemon.policy.command.words import suspicious_character

__all__ = ["MAX_COMMAND_LENGTH", "CommandAnalysis", "Redirect", "SimpleCommand", "analyze"]

MAX_COMMAND_LENGTH = 64 * 1024  # longer input is refused unparsed, never handed to bashlex
CACHE_SIZE = 4096
# bashlex parses each nested `$( … )` again from its start, which costs time quadratic in
# the depth; deeper nesting is refused unparsed, so the cost stays linear in the length.
MAX_NESTING = 8


def analyze(command: str) -> CommandAnalysis:
    """Analyse `command`; never raises, and the same text returns the same (cached) object.

    Fails closed: input bashlex cannot parse (`[[ ]]`, `case`, `$(( ))`, …), input it
    parses only in part, over-long input and any internal error all give `parsed=False`,
    which is never read-only.
    """
    if not isinstance(command, str):
        return _unparsed(repr(command), "not a string")
    return _cached(command)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _cached(command: str) -> CommandAnalysis:
    try:
        return _analyze(command)
    except Exception as error:  # noqa: BLE001 - a security gate fails closed, whatever broke
        return _unparsed(command, f"internal error: {type(error).__name__}")


def clear_cache() -> None:
    """Forget cached analyses (benchmarks measure uncached latency with it)."""
    _cached.cache_clear()


def _analyze(command: str) -> CommandAnalysis:
    if len(command) > MAX_COMMAND_LENGTH:
        return _unparsed(command, f"longer than {MAX_COMMAND_LENGTH} characters: not analysed")
    if not command.strip():
        return _unparsed(command, "empty command")
    if nesting_depth(command) > MAX_NESTING:
        return _unparsed(command, f"parentheses nested deeper than {MAX_NESTING}")
    resolver = Resolver()
    try:
        resolver.code(command, (), 0)
    except Exception as error:  # noqa: BLE001 - bashlex raises many types, all "cannot parse"
        return _unparsed(command, _parse_error(error))
    found = resolver.found
    found.finish()
    suspicious = suspicious_character(command)
    if suspicious:
        found.opaque.insert(0, f"contains {suspicious}, which hides what the command does")
    return _build(command, found)


def nesting_depth(command: str) -> int:
    """How deeply parentheses nest outside single quotes, in one pass (an upper bound of
    the nesting of `$( … )`, `<( … )` and subshells)."""
    depth = deepest = 0
    quoted = escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif quoted:
            quoted = char != "'"
        elif char == "\\":
            escaped = True
        elif char == "'":
            quoted = True
        elif char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth = max(depth - 1, 0)
    return deepest


def _parse_error(error: Exception) -> str:
    message = str(error) or type(error).__name__
    return f"{type(error).__name__}: {message}"[:300]


def _build(command: str, found: Findings) -> CommandAnalysis:
    commands = tuple(found.commands)
    opaque_reasons = found.opaque + [c.reason for c in commands if c.opaque]
    risky = tuple(dict.fromkeys(found.risky))
    blockers = (
        opaque_reasons
        + [f"sets {assignment}, which changes what runs" for assignment in risky]
        + [f"writes `{target}` through a redirect" for target in found.redirect_writes]
        + [f"`{c.text}`: {c.reason}" for c in commands if not c.read_only]
    )
    return CommandAnalysis(
        command=command,
        parsed=True,
        error=None,
        commands=commands,
        write_targets=tuple(dict.fromkeys(t for t in found.write_targets if t)),
        path_args=tuple(dict.fromkeys(found.path_args)),
        read_only=not blockers,
        opaque=bool(opaque_reasons),
        reason=blockers[0] if blockers else "every command only reads",
        risky_assignments=risky,
        writes_via_redirect=bool(found.redirect_writes),
        needs_person=tuple(dict.fromkeys(found.needs_person)),
        walks=tuple(dict.fromkeys(found.walks)),
        git_dirs=tuple(dict.fromkeys(found.git_dirs)),
    )


def _unparsed(command: str, error: str) -> CommandAnalysis:
    return CommandAnalysis(
        command=command, parsed=False, error=error, commands=(), write_targets=(),
        path_args=(), read_only=False, opaque=True,
        reason=f"cannot be parsed ({error})",
    )
