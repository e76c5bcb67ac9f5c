"""A fake OpenAI Responses API on loopback: scripted replies, streamed as SSE like the real one.

Codex CLI speaks the Responses API (`POST /v1/responses`, `"stream": true`). Each request is
answered with the next scripted `Reply`: text, function calls (`shell`, `exec_command`, MCP
tools: JSON arguments) and custom tool calls (`apply_patch`: the raw patch as `input`), sent
as the event sequence the real API streams (`response.created` … `response.completed`).
Every request body is kept, so a test can read what the agent sent back (tool outputs, the
context hooks added).
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
    """One model response: output items (messages, function calls, custom tool calls)."""

    items: list[dict[str, Any]]
    input_tokens: int = 100
    output_tokens: int = 20


@dataclass
class ErrorReply:
    status: int
    code: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


# A step may also be computed from the request it answers (e.g. to echo what a hook said).
Step = Reply | ErrorReply | Callable[[dict[str, Any]], "Reply | ErrorReply"]


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": f"msg_{next(_ids)}", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call(name: str, call_id: str | None = None, **args: Any) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{next(_ids)}", "status": "completed",
            "call_id": call_id or f"call_{next(_ids)}", "name": name,
            "arguments": json.dumps(args)}


def namespaced_call(namespace: str, name: str, call_id: str | None = None,
                    **args: Any) -> dict[str, Any]:
    """A call of a tool a `tool_search` exposed: MCP tools come as namespace `mcp__SERVER`."""
    return {**function_call(name, call_id, **args), "namespace": namespace}


def tool_search_call(query: str, call_id: str | None = None) -> dict[str, Any]:
    """Codex's client-side tool search (MCP tools are deferred until one finds them)."""
    return {"type": "tool_search_call", "id": f"ts_{next(_ids)}", "status": "completed",
            "call_id": call_id or f"call_{next(_ids)}", "execution": "client",
            "arguments": {"query": query}}


def custom_tool_call(name: str, text: str, call_id: str | None = None) -> dict[str, Any]:
    """A freeform tool call (the grammar-constrained `apply_patch` is one)."""
    return {"type": "custom_tool_call", "id": f"ctc_{next(_ids)}", "status": "completed",
            "call_id": call_id or f"call_{next(_ids)}", "name": name, "input": text}


def sse_events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The event sequence of a streamed response; text and arguments sent as delta pieces."""
    response_id = f"resp_{next(_ids)}"
    base = {"id": response_id, "object": "response", "created_at": 1_700_000_000,
            "model": model, "status": "in_progress", "output": []}
    seq = itertools.count()
    yield "response.created", {"type": "response.created", "sequence_number": next(seq),
                               "response": base}
    yield "response.in_progress", {"type": "response.in_progress",
                                   "sequence_number": next(seq), "response": base}
    for index, item in enumerate(reply.items):
        started = {**item, "status": "in_progress"}
        if item["type"] == "message":
            started["content"] = []
        elif item["type"] == "function_call":
            started["arguments"] = ""
        elif item["type"] == "custom_tool_call":
            started["input"] = ""
        yield "response.output_item.added", {"type": "response.output_item.added",
                                             "sequence_number": next(seq),
                                             "output_index": index, "item": started}
        yield from _deltas(item, index, seq)
        yield "response.output_item.done", {"type": "response.output_item.done",
                                            "sequence_number": next(seq),
                                            "output_index": index, "item": item}
    usage = {"input_tokens": reply.input_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": reply.output_tokens,
             "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": reply.input_tokens + reply.output_tokens}
    done = {**base, "status": "completed", "output": reply.items, "usage": usage}
    yield "response.completed", {"type": "response.completed", "sequence_number": next(seq),
                                 "response": done}


def _deltas(item: dict[str, Any], index: int,
            seq: Iterator[int]) -> Iterator[tuple[str, dict[str, Any]]]:
    if item["type"] == "message":
        text = item["content"][0]["text"]
        for start in range(0, len(text), 7):
            yield "response.output_text.delta", {
                "type": "response.output_text.delta", "sequence_number": next(seq),
                "item_id": item["id"], "output_index": index, "content_index": 0,
                "delta": text[start:start + 7]}
    elif item["type"] == "function_call":
        raw = item["arguments"]
        for start in range(0, len(raw), 10):
            yield "response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "sequence_number": next(seq),
                "item_id": item["id"], "output_index": index, "delta": raw[start:start + 10]}
    elif item["type"] == "custom_tool_call":
        raw = item["input"]
        for start in range(0, len(raw), 10):
            yield "response.custom_tool_call_input.delta", {
                "type": "response.custom_tool_call_input.delta", "sequence_number": next(seq),
                "item_id": item["id"], "output_index": index, "delta": raw[start:start + 10]}


class FakeResponsesAPI(LoopbackServer):
    """`POST /v1/responses` answers the next scripted step; every request is kept."""

    base_path = "/v1"  # the provider's base_url: Codex appends /responses

    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        super().__init__()

    def tool_outputs(self) -> dict[str, str]:
        """Every tool result the agent sent back, by call_id (the last one seen wins)."""
        outputs: dict[str, str] = {}
        for body in self.requests:
            for item in body.get("input") or []:
                if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
                    output = item.get("output")
                    outputs[str(item.get("call_id"))] = (
                        output if isinstance(output, str) else json.dumps(output))
        return outputs

    def _next(self, path: str, body: dict[str, Any]) -> Reply | ErrorReply:
        with self._lock:
            self.paths.append(path)
            self.requests.append(body)
            if not self.script:
                return ErrorReply(500, "server_error", "the fake API ran out of scripted replies")
            step = self.script.pop(0)
        return step(body) if callable(step) else step

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                with api._lock:
                    api.paths.append(f"GET {self.path}")
                if self.path.rstrip("/").endswith("/models"):
                    return self.send_json(200, {"object": "list", "data": [], "models": []})
                return self.send_json(404, _error("not_found", f"no route {self.path}"))

            def do_POST(self) -> None:
                raw = self.read_body()
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/responses"):
                    with api._lock:
                        api.paths.append(f"POST {self.path}")
                    return self.send_json(404, _error("not_found", f"no route {self.path}"))
                reply = api._next(self.path, body)
                if isinstance(reply, ErrorReply):
                    return self.send_json(reply.status, _error(reply.code, reply.message),
                                          reply.headers)
                self.send_events((f"event: {name}\ndata: {json.dumps(data)}\n\n"
                                  for name, data in sse_events(reply, str(body.get("model", "?")))),
                                 {"connection": "close"})

        return Handler


def _error(code: str, text: str) -> dict[str, Any]:
    return {"error": {"message": text, "type": code, "param": None, "code": code}}


def provider_config(url: str, model: str = "gpt-5.1-codex-fake") -> list[str]:
    """`codex -c` overrides that point Codex at the fake API (no key, no retries, no websocket)."""
    return ["-c", f'model="{model}"', "-c", 'model_provider="fake"',
            "-c", 'model_providers.fake.name="fake"',
            "-c", f'model_providers.fake.base_url="{url}"',
            "-c", 'model_providers.fake.wire_api="responses"',
            "-c", "model_providers.fake.request_max_retries=0",
            "-c", "model_providers.fake.stream_max_retries=0"]
