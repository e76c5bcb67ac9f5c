"""A fake OpenAI Chat Completions API on loopback: scripted replies, streamed as SSE.

Agents that speak to "OpenAI-compatible" providers (the Cline CLI among them) send
`POST /v1/chat/completions` with `"stream": true`. Each request is answered with the next
scripted `Reply`: text and function tool calls, sent as the `chat.completion.chunk` sequence
the real API streams (tool arguments in pieces, a usage chunk, then `data: [DONE]`). Every
request body is kept, so a test can read what the agent sent back (tool results, the context
its hooks added).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_http import LoopbackServer, QuietHandler

_ids = itertools.count(1)


@dataclass
class Reply:
    """One assistant message: text, then function tool calls."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 100
    completion_tokens: int = 20


@dataclass
class ErrorReply:
    status: int
    code: str
    message: str


# A step may also be computed from the request it answers (e.g. to echo what a hook said).
Step = Reply | ErrorReply | Callable[[dict[str, Any]], "Reply | ErrorReply"]


def tool_call(name: str, call_id: str | None = None, **args: Any) -> dict[str, Any]:
    return {"id": call_id or f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def sse_chunks(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """The chunk sequence of a streamed completion, arguments sent in 16-character pieces."""
    base = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion.chunk",
            "created": 1_790_000_000, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for start in range(0, len(reply.text), 7):
        yield chunk({"content": reply.text[start:start + 7]})
    for index, call in enumerate(reply.tool_calls):
        function = call["function"]
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": function["name"], "arguments": ""}}]})
        raw = function["arguments"]
        for start in range(0, len(raw), 16):
            yield chunk({"tool_calls": [{"index": index,
                                         "function": {"arguments": raw[start:start + 16]}}]})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    yield {**base, "choices": [], "usage": {
        "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens}}


class FakeChatAPI(LoopbackServer):
    """`POST /v1/chat/completions` answers the next scripted step; every request body is kept."""

    base_path = "/v1"  # an OpenAI-compatible client appends /chat/completions

    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        super().__init__()

    def tool_results(self) -> dict[str, str]:
        """What the agent sent back for each tool call id, across all requests so far."""
        results: dict[str, str] = {}
        with self._lock:
            for body in self.requests:
                for message in body.get("messages") or []:
                    if message.get("role") == "tool":
                        content = message.get("content")
                        results[str(message.get("tool_call_id"))] = (
                            content if isinstance(content, str) else json.dumps(content))
        return results

    def texts_sent(self) -> list[str]:
        """Every user and system text of the last request (hook context arrives as user text)."""
        with self._lock:
            body = self.requests[-1] if self.requests else {}
        found: list[str] = []
        for message in body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, str):
                found.append(content)
            elif isinstance(content, list):
                found += [part.get("text", "") for part in content if isinstance(part, dict)]
        return found

    def _next(self, body: dict[str, Any]) -> Reply | ErrorReply:
        with self._lock:
            self.requests.append(body)
            if not self.script:
                return ErrorReply(500, "server_error", "the fake API ran out of scripted replies")
            step = self.script.pop(0)
        return step(body) if callable(step) else step

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    return self.send_json(200, {"object": "list", "data": []})
                return self.send_json(404, _error("not_found", f"no route {self.path}"))

            def do_POST(self) -> None:
                try:
                    body = json.loads(self.read_body() or b"{}")
                except ValueError:
                    return self.send_json(400, _error("invalid_json", "the body is not JSON"))
                if not self.path.startswith("/v1/chat/completions"):
                    return self.send_json(404, _error("not_found", f"no route {self.path}"))
                reply = api._next(body)
                if isinstance(reply, ErrorReply):
                    return self.send_json(reply.status, _error(reply.code, reply.message))
                model = str(body.get("model", "?"))
                if body.get("stream"):
                    return self.send_events(
                        [*(f"data: {json.dumps(chunk)}\n\n" for chunk in sse_chunks(reply, model)),
                         "data: [DONE]\n\n"])
                return self.send_json(200, _completion_json(reply, model))

        return Handler


def _error(code: str, text: str) -> dict[str, Any]:
    return {"error": {"message": text, "type": "invalid_request_error", "code": code}}


def _completion_json(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": 1_790_000_000,
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if reply.tool_calls
                                         else "stop"}],
            "usage": {"prompt_tokens": reply.prompt_tokens,
                      "completion_tokens": reply.completion_tokens,
                      "total_tokens": reply.prompt_tokens + reply.completion_tokens}}
