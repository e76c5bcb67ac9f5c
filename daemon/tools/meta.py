"""Tools that change nothing on disk: select_active_intent, ask_followup_question, attempt_completion."""

from __future__ import annotations

from typing import Any

from intentd.daemon.tools.base import Tool, ToolContext, ToolFailed, ToolKind, ToolResult


def intent_context(intent: Any) -> str:
    """The block an agent gets back after selecting an intent: what it may touch and must meet."""
    def items(values: tuple[str, ...]) -> str:
        return "\n".join(f"  - {value}" for value in values) or "  (none)"

    return (f"<intent_context>\nid: {intent.id}\nname: {intent.name}\nstatus: {intent.status}\n"
            f"owned_scope:\n{items(intent.owned_scope)}\nconstraints:\n{items(intent.constraints)}\n"
            f"acceptance_criteria:\n{items(intent.acceptance_criteria)}\n</intent_context>")


def select_active_intent(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    intent = ctx.intents_lookup(args["intent_id"])
    if intent is None:  # the gate checks this first; the file may have changed in between
        raise ToolFailed(f"intent {args['intent_id']!r} is not in active_intents.yaml")
    return ToolResult(True, intent_context(intent), data={"intent_id": intent.id})


def ask_followup_question(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    return ToolResult(True, f"Question for the person: {args['question']}",
                      data={"question": args["question"], "options": args.get("options", [])})


def attempt_completion(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    return ToolResult(True, "Completion reported.", data={"result": args["result"]})


SELECT_ACTIVE_INTENT = Tool(
    name="select_active_intent",
    description="Select the intent (from .orchestration/active_intents.yaml) your work serves. "
                "Required before any tool that changes files or runs commands; returns the "
                "intent's scope, constraints and acceptance criteria.",
    schema={"type": "object", "additionalProperties": False, "required": ["intent_id"],
            "properties": {"intent_id": {"type": "string", "minLength": 1, "maxLength": 200}}},
    kind=ToolKind.META, execute=select_active_intent,
)

ASK_FOLLOWUP_QUESTION = Tool(
    name="ask_followup_question",
    description="Ask the person a question when you need information to go on.",
    schema={"type": "object", "additionalProperties": False, "required": ["question"], "properties": {
        "question": {"type": "string", "minLength": 1, "maxLength": 10_000},
        "options": {"type": "array", "items": {"type": "string"}, "maxItems": 10}}},
    kind=ToolKind.META, execute=ask_followup_question,
)

ATTEMPT_COMPLETION = Tool(
    name="attempt_completion",
    description="Report that the task is done, with a summary of the result.",
    schema={"type": "object", "additionalProperties": False, "required": ["result"], "properties": {
        "result": {"type": "string", "minLength": 1, "maxLength": 100_000}}},
    kind=ToolKind.META, execute=attempt_completion,
)
