"""Decide a shell command against allow/ask/deny glob rules: deny > ask > allow > read-only > default."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from intentd.daemon.policy.command.analysis import CommandAnalysis, SimpleCommand, analyze
from intentd.daemon.policy.command.globs import glob_could_extend, glob_matches

__all__ = ["CommandRules", "CommandVerdict", "Outcome", "decide_command", "glob_matches"]

Outcome = Literal["deny", "ask", "allow", "read_only", "unmatched"]
_MAX_SUFFIXES = 32  # argv positions tried when a wrapper's options were not understood


@dataclass(frozen=True)
class CommandRules:
    """The `commands:` section of the policy file. Patterns are globs over a simple
    command's text (see command_globs): `*` spans spaces and `/`, `?` is one character."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    default: Literal["ask", "deny"] = "ask"
    allow_redirects: bool = False
    # `auto_approve.safe_commands`: whether a read-only command needs no allow rule. When
    # off, the allow list is exact: every simple command, nested ones too, must match it.
    read_only_auto: bool = True


@dataclass(frozen=True)
class CommandVerdict:
    """The outcome, the reason (naming the simple command and the rule), and the analysis."""

    outcome: Outcome
    reason: str
    rule: str | None
    simple_command: str | None
    analysis: CommandAnalysis


def decide_command(command: str, rules: CommandRules) -> CommandVerdict:
    """Classify `command` under `rules`. Pure, cached per (command, rules), never raises:
    an internal error is a `deny` (a security gate fails closed)."""
    try:
        return _cached(command, rules)
    except TypeError:  # unhashable rules (lists instead of tuples): decide uncached
        pass
    except Exception as error:  # noqa: BLE001 - a crashed gate denies, it never raises
        return _crashed(command, error)
    try:
        return _decide(command, rules)
    except Exception as error:  # noqa: BLE001 - as above
        return _crashed(command, error)


def clear_cache() -> None:
    """Forget cached verdicts (benchmarks measure uncached latency with it)."""
    _cached.cache_clear()


@functools.lru_cache(maxsize=4096)
def _cached(command: str, rules: CommandRules) -> CommandVerdict:
    return _decide(command, rules)


def _crashed(command: str, error: Exception) -> CommandVerdict:
    analysis = analyze(command) if isinstance(command, str) else analyze("")
    reason = f"the command policy failed ({type(error).__name__}); refused"
    return CommandVerdict("deny", reason, None, None, analysis)


def _decide(command: str, rules: CommandRules) -> CommandVerdict:
    analysis = analyze(command)
    if not analysis.parsed:
        return _blocked(rules, analysis, None,
                        f"the command cannot be parsed ({analysis.error}); never auto-approved")
    for simple in analysis.commands:
        rule = _strict_rule(simple, rules.deny)
        if rule is not None:
            reason = f"`{_show(simple)}` matches deny rule `{rule}`{_via(simple)}"
            return CommandVerdict("deny", reason, rule, simple.text, analysis)
    for simple in analysis.commands:
        rule = _strict_rule(simple, rules.ask)
        if rule is not None:
            reason = f"`{_show(simple)}` matches ask rule `{rule}`{_via(simple)}"
            return CommandVerdict("ask", reason, rule, simple.text, analysis)
    blocked = _must_ask(analysis, rules)
    if blocked is not None:
        return _blocked(rules, analysis, *blocked)
    return _allow_or_default(analysis, rules)


def _must_ask(analysis: CommandAnalysis,
              rules: CommandRules) -> tuple[SimpleCommand | None, str] | None:
    """Opaque parts, secrets, run-time paths, risky assignments and (unless allowed)
    redirect writes need a person."""
    if analysis.opaque:
        simple = next((c for c in analysis.commands if c.opaque), None)
        detail = f"`{_show(simple)}`: {simple.reason}" if simple else analysis.reason
        return simple, f"cannot see what runs ({detail}); never auto-approved"
    if analysis.needs_person:
        return None, f"{analysis.needs_person[0]}; never auto-approved"
    for simple in analysis.commands:
        risky = [a for a in simple.assignments if a in analysis.risky_assignments]
        if risky:
            return simple, f"`{_show(simple)}` sets `{risky[0]}`, which changes what runs"
    if analysis.risky_assignments:
        return None, f"sets `{analysis.risky_assignments[0]}`, which changes what runs"
    if analysis.writes_via_redirect and not rules.allow_redirects:
        for simple in analysis.commands:
            targets = [r.target for r in simple.redirects if r.writes_file]
            if targets:
                return simple, (f"`{_show(simple)}` writes `{targets[0]}` through a redirect "
                                "and allow_redirects is off")
        return None, f"{analysis.reason} and allow_redirects is off"
    return None


def _allow_or_default(analysis: CommandAnalysis, rules: CommandRules) -> CommandVerdict:
    allowed: list[tuple[SimpleCommand, str]] = []
    for simple in analysis.commands:
        rule = None if simple.open_prefix is not None else _first_match(rules.allow, simple.text)
        if rule is not None:
            allowed.append((simple, rule))
        elif not rules.read_only_auto:
            return _unmatched(rules, analysis, simple,
                              f"`{_show(simple)}` matches no allow rule, and read-only commands "
                              f"need one (safe_commands is off){_via(simple)}")
        elif not simple.read_only:
            return _unmatched(rules, analysis, simple,
                              f"`{_show(simple)}` matches no allow rule and is not read-only "
                              f"({simple.reason}){_via(simple)}")
    if allowed:
        simple, rule = allowed[0]
        more = f" (and {len(allowed) - 1} more allowed)" if len(allowed) > 1 else ""
        rest = "; the rest only read" if len(allowed) < len(analysis.commands) else ""
        reason = f"`{_show(simple)}` matches allow rule `{rule}`{more}{rest}"
        return CommandVerdict("allow", reason, rule, simple.text, analysis)
    if analysis.read_only and rules.read_only_auto:
        shown = ", ".join(f"`{_show(c)}`" for c in analysis.commands[:3])
        return CommandVerdict("read_only", f"read-only: {shown}", None,
                              analysis.commands[0].text, analysis)
    return _unmatched(rules, analysis, None,
                      f"{analysis.reason}; not read-only and no allow rule matches")


def _unmatched(rules: CommandRules, analysis: CommandAnalysis, simple: SimpleCommand | None,
               reason: str) -> CommandVerdict:
    text = simple.text if simple else None
    if rules.default == "deny":
        return CommandVerdict("deny", f"{reason}; the default is deny", None, text, analysis)
    return CommandVerdict("unmatched", reason, None, text, analysis)


def _blocked(rules: CommandRules, analysis: CommandAnalysis, simple: SimpleCommand | None,
             reason: str) -> CommandVerdict:
    text = simple.text if simple else None
    if rules.default == "deny":
        return CommandVerdict("deny", f"{reason}; the default is deny", None, text, analysis)
    return CommandVerdict("ask", reason, None, text, analysis)


def _strict_rule(simple: SimpleCommand, patterns: Sequence[str]) -> str | None:
    """The first deny (or ask) pattern matching the command, a completion of its open
    arguments, or (for a wrapper not understood) any suffix of its argv."""
    texts = [simple.text]
    if simple.runs_suffix:
        last = min(len(simple.argv), _MAX_SUFFIXES)
        texts.extend(" ".join(simple.argv[index:]) for index in range(1, last))
    for pattern in patterns:
        if any(glob_matches(pattern, text) for text in texts):
            return pattern
        if simple.open_prefix is not None and glob_could_extend(pattern, simple.open_prefix):
            return pattern
    return None


def _first_match(patterns: Sequence[str], text: str) -> str | None:
    return next((pattern for pattern in patterns if glob_matches(pattern, text)), None)


def _show(simple: SimpleCommand | None) -> str:
    if simple is None:
        return ""
    return simple.text or " ".join(simple.assignments) or "(redirect only)"


def _via(simple: SimpleCommand) -> str:
    return f" (run through {' → '.join(simple.via)})" if simple.via else ""
