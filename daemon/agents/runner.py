"""`intentd run`'s agent loop: the Messages API, streamed, each tool call through the pipeline."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from intentd.daemon.agents.calls import CallResult, preview, summary
from intentd.daemon.agents.gateway import Gateway
from intentd.daemon.agents.prompt import build_system_prompt, workspace_facts
from intentd.daemon.tools.registry import anthropic_tools

CUT_NOTE = ("Your reply was cut at the max_tokens limit before this call was complete, so it was "
            "not run. Make smaller steps.")


@dataclass(frozen=True)
class RunSettings:
    task: str
    model: str
    max_tokens: int
    max_turns: int


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, usage: Any) -> Usage:
        turn = Usage(int(getattr(usage, "input_tokens", 0) or 0),
                     int(getattr(usage, "output_tokens", 0) or 0))
        self.input_tokens += turn.input_tokens
        self.output_tokens += turn.output_tokens
        return turn


@dataclass
class TurnOutcome:
    results: list[dict[str, Any]] = field(default_factory=list)
    completion: str | None = None


class AgentRunner:
    def __init__(self, client: Any, gateway: Gateway, settings: RunSettings,
                 out: TextIO | None = None, stdin: TextIO | None = None) -> None:
        self.client, self.gateway, self.settings = client, gateway, settings
        self.out, self.stdin = out or sys.stdout, stdin or sys.stdin
        self.usage = Usage()
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": settings.task}]
        self.system = build_system_prompt(workspace_facts(gateway.workspace, gateway.intents()))
        self.tools = anthropic_tools()

    def run(self) -> int:
        """0 when the agent completed (or ended its turn), 1 when it ran out of turns."""
        for turn in range(1, self.settings.max_turns + 1):
            self._say(f"\n[turn {turn}]")
            message = self._stream_turn()
            self._report_usage(message)
            self.messages.append({"role": "assistant", "content": assistant_blocks(message)})
            uses = [b for b in message.content if getattr(b, "type", None) == "tool_use"]
            if not uses:
                if message.stop_reason != "max_tokens":
                    self._say("the agent ended its turn without calling attempt_completion")
                    return 0
                self.messages.append({"role": "user", "content": "Continue where you were cut."})
                continue
            outcome = self._run_tools(uses, f"turn-{turn}", message.stop_reason == "max_tokens")
            if outcome.completion is not None:
                self._say(f"\ncompleted: {outcome.completion}")
                return 0
            self.messages.append({"role": "user", "content": outcome.results})
        self._say(f"\nstopped: {self.settings.max_turns} turns reached without attempt_completion "
                  "(raise --max-turns to let it go on)")
        return 1

    def _stream_turn(self) -> Any:
        request = {"model": self.settings.model, "max_tokens": self.settings.max_tokens,
                   "system": self.system, "tools": self.tools, "messages": self.messages}
        wrote_text = False
        with self.client.messages.stream(**request) as stream:
            for event in stream:
                if event.type == "text":
                    self.out.write(event.text)
                    self.out.flush()
                    wrote_text = True
            message = stream.get_final_message()
        if wrote_text:
            self.out.write("\n")
        return message

    def _run_tools(self, uses: list[Any], batch: str, cut: bool) -> TurnOutcome:
        outcome = TurnOutcome()
        for index, use in enumerate(uses):
            self._say(f"  -> {use.name} {preview(use.input)}")
            if cut and index == len(uses) - 1:  # only the last block can be cut short
                result = CallResult.refused("validate", CUT_NOTE)
            elif not isinstance(use.input, dict):
                result = CallResult.refused("validate", "the arguments must be a JSON object")
            else:
                result = self.gateway.call(use.name, use.input, batch)
            self._say("     " + summary(result))
            answer = self._ask_person(use, result) if use.name == "ask_followup_question" else None
            outcome.results.append(tool_result(use.id, result, answer))
            if use.name == "attempt_completion" and result.ran and result.ok:
                outcome.completion = str(use.input.get("result", ""))
                return outcome
        return outcome

    def _ask_person(self, use: Any, result: CallResult) -> str | None:
        if not result.ran:
            return None
        if not self.stdin.isatty():
            return ("No person is available to answer. Decide on your own, and say in "
                    "attempt_completion what you assumed.")
        self.out.write(f"\n  the agent asks: {use.input.get('question')}\n  your answer: ")
        self.out.flush()
        return f"The person answered: {self.stdin.readline().strip() or '(no answer)'}"

    def _report_usage(self, message: Any) -> None:
        turn = self.usage.add(message.usage)
        self._say(f"  tokens: {turn.input_tokens} in / {turn.output_tokens} out this turn; "
                  f"{self.usage.input_tokens} in / {self.usage.output_tokens} out in total")

    def _say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()


def assistant_blocks(message: Any) -> list[dict[str, Any]]:
    """The assistant turn as request content: tool_use ids must come back exactly as sent."""
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            if block.text:  # the API refuses empty text blocks
                blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            blocks.append({"type": "tool_use", "id": block.id, "name": block.name,
                           "input": block.input})
        else:
            blocks.append(block.model_dump(exclude_none=True))
    return blocks


def tool_result(tool_use_id: str, result: CallResult, text: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id,
                             "content": text or result.for_model()}
    if result.is_error:
        block["is_error"] = True
    return block
