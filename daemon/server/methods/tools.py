"""tools/list, tools/call, tools/authorize, tools/report: the pipeline over the socket."""

from __future__ import annotations

import asyncio
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.decision import Decision, Verdict
from intentd.daemon.engine.engine import Outcome
from intentd.daemon.engine.session import Session
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.rpc import MethodError, MethodTable, Params
from intentd.daemon.tools.registry import BUILTIN_TOOLS


async def call_tool(core: DaemonCore, session: Session, tool: Any, args: Any,
                    batch: str | None, timeout: float | None, *, run: bool = True,
                    native_prompt: bool = False) -> dict[str, Any]:
    """Decide a call (waiting for a person when needed), then run or authorize it."""
    ev = core.engine.evaluate(session, tool, args, batch)
    try:
        decision, approved_by, answer = await core.decide(ev, timeout, native_prompt and not run)
    except MethodError:  # the daemon is stopping: the refusal still goes in the ledger
        core.engine.refuse(ev, Decision.deny("approval", "the daemon stopped before a person answered"))
        raise
    except asyncio.CancelledError:
        core.engine.refuse(ev, Decision.deny("approval", "withdrawn: the caller disconnected"))
        raise
    ev.decision = decision  # what the receipt records: the final word, a person's included
    if decision.verdict is Verdict.ASK:  # handed to the agent's prompt: ready, should it say yes
        outcome = await core.in_thread(core.engine.authorize, ev, approved_by)
    elif not decision.allowed:
        outcome = core.engine.refuse(ev, decision)
    elif run:
        outcome = await core.in_thread(core.engine.run, ev, approved_by)
    elif not ev.ctx.destructive and not ev.ctx.config.policy.hooks.pre_tool:
        outcome = core.engine.authorize(ev, str(approved_by))  # nothing slow to do: stay on the loop
    else:
        outcome = await core.in_thread(core.engine.authorize, ev, approved_by)
    answer_json = _answer(outcome)
    answer_json["feedback"] = answer.feedback if answer else None
    return answer_json


def _answer(outcome: Outcome) -> dict[str, Any]:
    answer = outcome.to_json()
    if outcome.result is None and not outcome.decision.allowed:
        answer["result"] = {"ok": False, "output": outcome.decision.reason}
    return answer


def register(table: MethodTable, core: DaemonCore) -> None:
    async def tools_list(conn: Any, params: Params) -> dict[str, Any]:
        return {"tools": [{**tool.to_anthropic(), "kind": tool.kind.value}
                          for tool in BUILTIN_TOOLS.values()]}

    async def tools_call(conn: Any, params: Params) -> dict[str, Any]:
        session = core.session(params)
        return await call_tool(core, session, params.text("tool"), params.obj("args", {}),
                               params.opt_text("batch"), params.opt_number("approval_timeout"))

    async def tools_authorize(conn: Any, params: Params) -> dict[str, Any]:
        session = core.session(params)
        answer = await call_tool(core, session, params.text("tool"), params.obj("args", {}),
                                 params.opt_text("batch"), params.opt_number("approval_timeout"),
                                 run=False, native_prompt=params.opt_bool("native_prompt", False))
        answer.pop("result", None)
        return answer

    async def tools_report(conn: Any, params: Params) -> dict[str, Any]:
        session = core.session(params)
        ok = params.opt_bool("ok", True)
        output = params.opt_text("output") or ""
        outcome = await core.in_thread(core.engine.report, session, params.text("call_id"), ok,
                                       output)
        if outcome is None:
            raise MethodError(protocol.INVALID_PARAMS, "call_id is not an authorized call of this "
                           "session awaiting its report", {"param": "call_id"})
        audit = outcome.result.data.get("scope_audit") if outcome.result else None
        # what the scope audit found and undid; its message is for the hook to hand the agent
        return {"recorded": True, **({"scope_audit": audit} if audit else {})}

    for name, handler in [(protocol.TOOLS_LIST, tools_list), (protocol.TOOLS_CALL, tools_call),
                          (protocol.TOOLS_AUTHORIZE, tools_authorize),
                          (protocol.TOOLS_REPORT, tools_report)]:
        table.register(name, handler)
