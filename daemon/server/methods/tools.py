"""tools/list, tools/call, tools/authorize, tools/report: the pipeline over the socket."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.engine import Execution, Outcome
from intentd.daemon.engine.session import Session
from intentd.daemon.protocol import messages
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.rpc import MethodError, MethodTable, Params
from intentd.daemon.tools.registry import BUILTIN_TOOLS


async def call_tool(core: DaemonCore, session: Session, tool: Any, args: Any,
                    batch: str | None, timeout: float | None, *, run: bool = True,
                    native_prompt: bool = False) -> messages.CallAnswer:
    """One call's lifecycle, the approval queue its approver: run here (tools/call), or
    authorized for the client to run and report (tools/authorize)."""
    execution = Execution.HERE if run else Execution.ELSEWHERE
    outcome = await core.engine.call_async(
        session, tool, args, batch, execution=execution, offload=core.offload,
        approver=core.approver(timeout, native_prompt and not run))
    return _answer(outcome)


def _answer(outcome: Outcome) -> messages.CallAnswer:
    """The outcome for the agent; a refused call's reason is its tool error."""
    decision, result = outcome.decision, outcome.result
    output = (messages.ToolOutput(ok=result.ok, output=result.output, data=result.data)
              if result is not None else
              None if decision.allowed else messages.ToolOutput(ok=False, output=decision.reason))
    return messages.CallAnswer(
        call_id=outcome.call_id, decision=decision.verdict.value, stage=decision.stage,
        reason=decision.reason, result=output, checkpoint_id=outcome.checkpoint_id,
        approved_by=outcome.approved_by, feedback=outcome.feedback)


def register(table: MethodTable, core: DaemonCore) -> None:
    async def tools_list(conn: Any, params: Params) -> dict[str, Any]:
        return messages.ToolsList(tools=tuple(
            messages.ToolInfo(name=tool.name, description=tool.description,
                              input_schema=dict(tool.schema), kind=tool.kind.value)
            for tool in BUILTIN_TOOLS.values())).to_json()

    async def tools_call(conn: Any, params: Params) -> dict[str, Any]:
        session = core.session(params)
        answer = await call_tool(core, session, params.text("tool"), params.obj("args", {}),
                                 params.opt_text("batch"), params.opt_number("approval_timeout"))
        return answer.to_json()

    async def tools_authorize(conn: Any, params: Params) -> dict[str, Any]:
        session = core.session(params)
        answer = await call_tool(core, session, params.text("tool"), params.obj("args", {}),
                                 params.opt_text("batch"), params.opt_number("approval_timeout"),
                                 run=False, native_prompt=params.opt_bool("native_prompt", False))
        return replace(answer, result=None).to_json()  # the client runs the tool

    async def tools_report(conn: Any, params: Params) -> dict[str, Any]:
        session = core.session(params)
        ok = params.opt_bool("ok", True)
        output = params.opt_text("output") or ""
        call_id = params.text("call_id")
        outcome = await core.in_thread(core.engine.report, session, call_id, ok, output,
                                       brief=core.engine.brief_report(call_id))
        if outcome is None:
            raise MethodError(protocol.INVALID_PARAMS, "call_id is not an authorized call of this "
                           "session awaiting its report", {"param": "call_id"})
        audit = outcome.result.data.get("scope_audit") if outcome.result else None
        # what the scope audit found and undid; its message is for the hook to hand the agent
        return messages.Reported(recorded=True, scope_audit=audit or {}).to_json()

    for name, handler in [(protocol.TOOLS_LIST, tools_list), (protocol.TOOLS_CALL, tools_call),
                          (protocol.TOOLS_AUTHORIZE, tools_authorize),
                          (protocol.TOOLS_REPORT, tools_report)]:
        table.register(name, handler)
