"""The runner's Messages API side: the client, and one-line messages for its errors."""

from __future__ import annotations

import os
from typing import Any

import anthropic

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
API_ERRORS: tuple[type[Exception], ...] = (anthropic.APIError,)


def missing_key() -> str | None:
    if any(os.environ.get(name) for name in KEY_VARIABLES):
        return None
    return ("ANTHROPIC_API_KEY is not set: export your API key (or try `intentd demo`, which "
            "needs none)")


def make_client(max_retries: int) -> anthropic.Anthropic:
    """The SDK reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself; retries are its own."""
    return anthropic.Anthropic(max_retries=max_retries)


def _detail(exc: anthropic.APIStatusError) -> str:
    body: Any = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc.message)


def explain(exc: Exception, model: str, base_url: str, retries: int) -> str:
    """One line that says what went wrong and what to do about it."""
    if isinstance(exc, anthropic.AuthenticationError):
        return f"the API key was refused (401: {_detail(exc)}); check ANTHROPIC_API_KEY"
    if isinstance(exc, anthropic.PermissionDeniedError):
        return f"the API key may not do this (403: {_detail(exc)})"
    if isinstance(exc, anthropic.NotFoundError):
        return (f"model {model!r} was not found (404: {_detail(exc)}); choose another with "
                "--model or INTENTD_MODEL")
    if isinstance(exc, anthropic.RateLimitError):
        return (f"rate limited by the API (429: {_detail(exc)}) after {retries} retries; wait a "
                "moment and run again")
    if isinstance(exc, anthropic.APIStatusError):
        return f"the API answered {exc.status_code}: {_detail(exc)}"
    if isinstance(exc, anthropic.APITimeoutError):
        return f"the API at {base_url} did not answer in time (after {retries} retries)"
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        return (f"cannot reach the API at {base_url} ({cause}); check the network or "
                "ANTHROPIC_BASE_URL")
    return f"the API call failed: {type(exc).__name__}: {exc}"
