"""Approvals without the desktop app: ask on the terminal, or refuse when no person can be asked."""

from __future__ import annotations

import sys
from typing import TextIO

from intentd.daemon.agents.calls import preview
from intentd.daemon.agents.local_gateway import Answer, NoPerson, PersonPrompt
from intentd.daemon.engine.engine import Evaluation
from intentd.daemon.engine.preview import proposed_diff

MAX_DIFF_LINES = 60


def shown_diff(ev: Evaluation) -> str | None:
    """The diff the call would apply, cut to what fits on a terminal."""
    diff = proposed_diff(ev)
    if diff is None:
        return None
    lines = diff.splitlines()
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return "\n".join(lines)


class TerminalApprover:
    """Asks y/n (and optional feedback) on the terminal; without a terminal, refuses."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin, self.stdout = stdin or sys.stdin, stdout or sys.stdout

    def __call__(self, ev: Evaluation) -> Answer:
        if not self.stdin.isatty():
            raise NoPerson("it needs a person's approval and none can be asked: intentd runs "
                           "in-process without a terminal (start `intentd serve` and approve in "
                           "the desktop app)")
        out = self.stdout
        out.write(f"\n  approval needed: {ev.ctx.name} {preview(ev.ctx.args)}\n"
                  f"  why: {ev.decision.reason}\n")
        diff = shown_diff(ev)
        if diff:
            out.write("  " + diff.replace("\n", "\n  ") + "\n")
        out.write("  approve? [y/N] ")
        out.flush()
        approved = self.stdin.readline().strip().lower() in ("y", "yes")
        out.write("  feedback for the agent (optional, Enter to skip): ")
        out.flush()
        feedback = self.stdin.readline().strip() or None
        return Answer(approved, feedback)


def refuse_without_person(reason: str) -> PersonPrompt:
    """An approver for front-ends with nobody to ask (the MCP bridge without a daemon)."""
    def approve(ev: Evaluation) -> Answer:
        raise NoPerson(reason)
    return approve


def auto_approve(by: str) -> PersonPrompt:
    """An approver that says yes as `by` (the scripted demo, which says so when it does)."""
    def approve(ev: Evaluation) -> Answer:
        return Answer(True, None, by=by)
    return approve
