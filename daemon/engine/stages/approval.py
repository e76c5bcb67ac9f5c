"""Stage 10: auto-approval settings per action class, with a limit on consecutive auto-approvals."""

# max_consecutive counts the calls that may change something (edits, commands not proven
# read-only, MCP tools) auto-approved in a row: it stops an agent looping on changes. Reads
# and read-only commands neither count nor break the run, so a long run of reads is never
# interrupted. Any call a person answers (in the app, the CLI, the agent's own prompt, or
# ahead of time by a grant) starts the count again.

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.session import Tally
from intentd.daemon.engine.stages import Finding
from intentd.daemon.policy.config import AutoApprove
from intentd.daemon.tools.base import ToolKind


class ApprovalStage:
    name = "approval"

    def check(self, ctx: CallContext) -> Decision | Finding:
        if ctx.kind is ToolKind.META:
            return Decision.allow(self.name, f"{ctx.name} changes nothing")
        settings = ctx.config.policy.auto_approve
        why_not = ctx.must_ask or _why_not_auto(ctx, settings)
        if why_not:  # a person answers: the run of auto-approvals starts again
            return Finding(Decision.ask(self.name, why_not), tally=Tally(auto_in_row=0))
        if not counted(ctx):
            return Decision.allow(self.name, _why_auto(ctx))
        in_row = ctx.session.auto_approved_in_row
        if settings.max_consecutive and in_row >= settings.max_consecutive:
            why = (f"{settings.max_consecutive} changes in a row were auto-approved; a person "
                   "checks in once")
            # the check-in is a person's, every time: no grant answers it
            return Finding(Decision.ask(self.name, why), must_ask=why, tally=Tally(auto_in_row=0))
        return Finding(Decision.allow(self.name, _why_auto(ctx)), tally=Tally(auto_in_row=in_row + 1))


def counted(ctx: CallContext) -> bool:
    """Whether max_consecutive counts the call: it may change something."""
    return ctx.kind is ToolKind.MCP or ctx.destructive


def _why_not_auto(ctx: CallContext, settings: AutoApprove) -> str | None:
    external = ctx.not_auto[0] if ctx.not_auto else None
    if ctx.kind is ToolKind.READ:
        if external:
            return None if settings.read_external else f"{external} (read_external is off)"
        return None if settings.read else "auto-approval of reads is off"
    if ctx.kind is ToolKind.EDIT:
        if external:
            return None if settings.edit_external else f"{external} (edit_external is off)"
        return None if settings.edit else "auto-approval of edits is off"
    if ctx.kind is ToolKind.MCP:
        return None if settings.mcp else "auto-approval of MCP tools is off"
    verdict = ctx.command()
    if verdict is None:
        return "unknown kind of tool"
    if external:
        return external  # a command naming ignored or external paths always goes to a person
    if verdict.outcome == "allow":
        return None
    if verdict.outcome == "read_only":
        return None if settings.safe_commands else "auto-approval of safe commands is off"
    if settings.all_commands:
        return None
    return verdict.reason or "the command is not on the allow list"


def _why_auto(ctx: CallContext) -> str:
    verdict = ctx.command()
    if verdict is not None:
        return f"auto-approved: {verdict.reason}"
    return f"auto-approved: {ctx.kind.value if ctx.kind else 'call'} inside the workspace"
