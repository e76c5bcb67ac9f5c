"""The sandbox as the engine uses it: a command call's confinement request, and its audit."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.intents import Intent
from intentd.daemon.sandbox.audit import Store, audit
from intentd.daemon.sandbox.confine import SandboxRequest
from intentd.daemon.sandbox.git_control import Before
from intentd.daemon.tools.base import ToolResult

log = logging.getLogger(__name__)


def request_for(ctx: CallContext, approved_by: str | None) -> SandboxRequest:
    """Writes held to the selected intent's scope (nothing without one); TCP per the policy, or
    because a person approved this very call."""
    scope = ctx.intent.owned_scope if ctx.intent is not None else ()
    network = ctx.config.policy.sandbox.network == "allow" or approved_by == "person"
    return SandboxRequest(ctx.root, scope, network)


def audited(ctx: CallContext, result: ToolResult, store: Store, checkpoint_id: str,
            overlapped: bool = False, git_before: Before | None = None) -> ToolResult:
    """The result with the scope audit's word added: what was undone, named path by path."""
    mode = ctx.config.policy.scope_audit
    try:
        found = audit(store, checkpoint_id, audit_intent(ctx), mode, overlapped,
                      _writable(result), ctx.config.fold_case, git_before)
    except Exception as exc:  # never silent: the agent, the ledger and the app are told
        log.exception("scope audit after %s failed", checkpoint_id)
        note = (f"[scope audit failed: {exc}; changes outside the scope may remain — "
                f"compare with checkpoint {checkpoint_id}]")
        return _with(result, note, {"mode": mode, "checkpoint_id": checkpoint_id,
                                    "error": str(exc), "message": note})
    if found is None:
        return result
    return _with(result, found.message(), found.to_json())


def audit_intent(ctx: CallContext) -> Intent | None:
    """The intent whose scope a command's changes are held to: the one the intent gate gave a
    command that may change files; for one proven read-only (the gate gives it none), the
    session's selected intent while it is still selectable. None: nothing is in scope."""
    if ctx.intent is not None:
        return ctx.intent
    selected = ctx.session.intent_id
    intent = ctx.config.intents.get(selected) if selected else None
    if intent is None or intent.status not in ctx.config.policy.selectable_statuses:
        return None
    return intent


def _writable(result: ToolResult) -> tuple[str, ...] | None:
    """The workspace folders and files a command confined by Landlock could write (devices and
    its temp folder aside); None when it ran unconfined or elsewhere (a hook-based agent's)."""
    sandbox = result.data.get("sandbox")
    if not isinstance(sandbox, dict) or sandbox.get("confined") is not True:
        return None
    return tuple(w for w in sandbox.get("writable", []) if not w.startswith(("/", "$")))


def _with(result: ToolResult, note: str, record: dict[str, Any]) -> ToolResult:
    output = f"{result.output}\n{note}" if result.output else note
    return replace(result, output=output, data={**result.data, "scope_audit": record})
