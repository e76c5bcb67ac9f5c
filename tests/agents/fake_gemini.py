"""A fake Gemini API on loopback: scripted model turns, streamed as SSE like the real one.

Gemini CLI talks to `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` for the agent's
turns and to `:generateContent` for its own small helper questions (routing, "who speaks
next"), and counts tokens with `:countTokens`. The script answers only the agent's turns; the
helper questions get a fixed, harmless JSON answer. Every request body is kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_http import LoopbackServer, QuietHandler

FAKE_KEY = "fake-gemini-key"


@dataclass
class Turn:
    """One model reply: text and functionCall parts."""

    parts: list[dict[str, Any]]
    finish_reason: str = "STOP"


@dataclass
class ErrorReply:
    status: int
    message: str


def text(value: str) -> dict[str, Any]:
    return {"text": value}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args}}


def _usage() -> dict[str, int]:
    return {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}


def _response(parts: list[dict[str, Any]], finish: str | None, model: str) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": _usage(), "modelVersion": model}


# Helper questions Gemini CLI asks with a JSON schema, answered so the agent's turn goes on as
# scripted: routing picks a model, the next-speaker check hands the turn back to the user.
HELPER_ANSWERS = {"next_speaker": "user", "model_choice": "flash", "reasoning": "scripted"}


def helper_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A JSON object for a helper question: known fields answered, other required ones empty."""
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    answer: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        if name in HELPER_ANSWERS:
            answer[name] = HELPER_ANSWERS[name]
        elif isinstance(spec, dict) and spec.get("enum"):
            answer[name] = spec["enum"][0]
        elif isinstance(spec, dict) and str(spec.get("type", "")).lower() == "boolean":
            answer[name] = False
        elif isinstance(spec, dict) and str(spec.get("type", "")).lower() in ("number", "integer"):
            answer[name] = 0
        else:
            answer[name] = ""
    return answer


class FakeGeminiAPI(LoopbackServer):
    """Answers the agent's turns from the script, in order; helper questions out of band."""

    def __init__(self, script: Sequence[Turn | ErrorReply]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []     # the agent's turns (streamed)
        self.helper_requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        super().__init__()

    def _next(self, body: dict[str, Any]) -> Turn | ErrorReply:
        with self._lock:
            self.requests.append(body)
            if not self.script:
                return Turn([text("Done.")])  # the script is over: the agent ends its turn
            return self.script.pop(0)

    def function_responses(self) -> list[dict[str, Any]]:
        """Every functionResponse part the agent sent back, in order (results of tool calls)."""
        seen: list[dict[str, Any]] = []
        if not self.requests:
            return seen
        for content in self.requests[-1].get("contents") or []:
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    seen.append(part["functionResponse"])
        return seen

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                api.paths.append(f"GET {self.path}")
                self.send_json(404, {"error": {"code": 404, "message": f"no route {self.path}",
                                           "status": "NOT_FOUND"}})

            def do_POST(self) -> None:
                body = json.loads(self.read_body() or b"{}")
                api.paths.append(f"POST {self.path}")
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
                route = self.path.split("?", 1)[0]
                model = route.rsplit("/", 1)[-1].split(":", 1)[0]
                if route.endswith(":countTokens"):
                    return self.send_json(200, {"totalTokens": 100})
                if route.endswith(":generateContent"):
                    api.helper_requests.append(body)
                    answer = json.dumps(helper_answer(body))
                    return self.send_json(200, _response([text(answer)], "STOP", model))
                if not route.endswith(":streamGenerateContent"):
                    return self.send_json(404, {"error": {"code": 404, "message": "no route",
                                                      "status": "NOT_FOUND"}})
                reply = api._next(body)
                if isinstance(reply, ErrorReply):
                    return self.send_json(reply.status, {"error": {
                        "code": reply.status, "message": reply.message, "status": "INTERNAL"}})
                self._stream(reply, model)

            def _stream(self, turn: Turn, model: str) -> None:
                # each part in its own chunk, the finish reason with the last, as the API does
                chunks = [_response([part], None, model) for part in turn.parts[:-1]]
                chunks.append(_response(turn.parts[-1:] or [text("")], turn.finish_reason, model))
                payload = b"".join(f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


@dataclass
class GeminiHome:
    """A HOME for Gemini CLI with nothing reaching past loopback: no telemetry, no usage
    statistics, no update checks, no IDE, the workspace trusted."""

    settings: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def base_settings() -> dict[str, Any]:
        return {
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "ide": {"enabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
        }
