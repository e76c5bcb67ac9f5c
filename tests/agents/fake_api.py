"""A fake Messages API on loopback: scripted replies, streamed as SSE like the real one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_http import LoopbackServer, QuietHandler


@dataclass
class Turn:
    """One assistant message: text and tool_use blocks, and why it stopped."""

    blocks: list[dict[str, Any]]
    stop_reason: str = "tool_use"
    input_tokens: int = 100
    output_tokens: int = 20


@dataclass
class ErrorReply:
    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": args}


def sse_events(turn: Turn, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The event sequence of a streamed message, tool input sent as input_json_delta pieces."""
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": 1}}}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(turn.blocks):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            for start in range(0, len(block["text"]), 7):
                delta = {"type": "text_delta", "text": block["text"][start:start + 7]}
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": delta}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            raw = json.dumps(block["input"])
            for start in range(0, len(raw), 10):
                delta = {"type": "input_json_delta", "partial_json": raw[start:start + 10]}
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": turn.output_tokens}}
    yield "message_stop", {"type": "message_stop"}


class FakeMessagesAPI(LoopbackServer):
    """`POST /v1/messages` answers the next scripted reply; every request body is kept."""

    def __init__(self, script: list[Turn | ErrorReply]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        super().__init__()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Turn | ErrorReply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self.script:
                return ErrorReply(500, "api_error", "the fake API ran out of scripted replies")
            return self.script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(self.read_body() or b"{}")
                if not self.path.startswith("/v1/messages"):
                    return self.send_json(404, {"type": "error", "error": {
                        "type": "not_found_error", "message": f"no route {self.path}"}})
                reply = api._next(body, {k.lower(): v for k, v in self.headers.items()})
                if isinstance(reply, ErrorReply):
                    return self.send_json(reply.status, {"type": "error", "error": {
                        "type": reply.error_type, "message": reply.message}}, reply.headers)
                model = body.get("model", "?")
                if body.get("stream"):
                    return self.send_events(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                                            for name, data in sse_events(reply, model))
                return self.send_json(200, _message_json(reply, model))

        return Handler


def _message_json(turn: Turn, model: str) -> dict[str, Any]:
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": turn.blocks, "stop_reason": turn.stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens}}
