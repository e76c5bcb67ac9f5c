"""JSON-RPC 2.0 dispatch: a table of methods, request checks, and errors carrying their codes."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from intentd.daemon import protocol

log = logging.getLogger(__name__)


class MethodError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def bad_params(name: str, what: str) -> MethodError:
    return MethodError(protocol.INVALID_PARAMS, f"{name} {what}", {"param": name})


class Params:
    """Typed access to a request's params; mistakes become -32602 naming the parameter."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def text(self, name: str) -> str:
        value = self.raw.get(name)
        if not isinstance(value, str) or not value:
            raise bad_params(name, "is required and must be a non-empty string")
        return value

    def opt_text(self, name: str) -> str | None:
        value = self.raw.get(name)
        if value is not None and not isinstance(value, str):
            raise bad_params(name, "must be a string")
        return value

    def opt_number(self, name: str) -> float | None:
        value = self.raw.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or value <= 0):
            raise bad_params(name, "must be a positive number")
        return value

    def opt_bool(self, name: str, default: bool) -> bool:
        value = self.raw.get(name, default)
        if not isinstance(value, bool):
            raise bad_params(name, "must be true or false")
        return value

    def obj(self, name: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
        value = self.raw.get(name, default)
        if not isinstance(value, dict):
            raise bad_params(name, "must be an object")
        return value


Handler = Callable[[Any, Params], Awaitable[Any]]  # (connection, params) -> result
Guard = Callable[[Any, str, Any], None]  # (connection, method, params); raises MethodError to refuse


class MethodTable:
    def __init__(self, guard: Guard | None = None) -> None:
        self._methods: dict[str, Handler] = {}
        self.guard = guard

    def register(self, name: str, handler: Handler) -> None:
        if name in self._methods:
            raise ValueError(f"method {name} registered twice")
        self._methods[name] = handler

    async def handle_line(self, conn: Any, line: bytes) -> Any:
        """The answer to one line (object, batch list, or None for notifications only)."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as exc:
            return protocol.error(None, protocol.PARSE_ERROR, f"parse error: {exc}")
        if isinstance(message, list):
            if not message:
                return protocol.error(None, protocol.INVALID_REQUEST, "empty batch")
            if len(message) > protocol.MAX_BATCH:
                return protocol.error(None, protocol.REQUEST_TOO_LARGE,
                                      f"a batch holds at most {protocol.MAX_BATCH} requests")
            answers = await asyncio.gather(*(self.handle_message(conn, m) for m in message))
            return [a for a in answers if a is not None] or None
        return await self.handle_message(conn, message)

    async def handle_message(self, conn: Any, message: Any) -> dict[str, Any] | None:
        request_id = message.get("id") if isinstance(message, dict) else None
        if not _valid_id(request_id):
            request_id = None
        problem = _request_problem(message)
        if problem:
            return protocol.error(request_id, protocol.INVALID_REQUEST, problem)
        is_notification = "id" not in message
        handler = self._methods.get(message["method"])
        if handler is None:
            answer = protocol.error(request_id, protocol.METHOD_NOT_FOUND,
                                    f"unknown method {message['method'][:100]!r}")
        else:
            answer = await self._call(handler, conn, message, request_id)
        return None if is_notification else answer

    async def _call(self, handler: Handler, conn: Any, message: dict[str, Any],
                    request_id: Any) -> dict[str, Any]:
        params = message.get("params", {})
        if not isinstance(params, dict):
            return protocol.error(request_id, protocol.INVALID_PARAMS, "params must be an object")
        try:
            if self.guard is not None:
                self.guard(conn, message["method"], params)
            return protocol.result(request_id, await handler(conn, Params(params)))
        except MethodError as exc:
            return protocol.error(request_id, exc.code, exc.message, exc.data)
        except Exception as exc:
            log.exception("method %s failed", message["method"])
            return protocol.error(request_id, protocol.INTERNAL_ERROR, f"internal error: {exc}")


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, int | str) and not isinstance(value, bool))


def _request_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return "a request must be a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not isinstance(message.get("method"), str):
        return "method must be a string"
    if not _valid_id(message.get("id")):
        return "id must be a string, a number or null"
    return None
