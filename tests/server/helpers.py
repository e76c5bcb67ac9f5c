"""Helpers for end-to-end tests: sessions, waiting for notifications, calls in the background."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client


def open_session(client: Client, workspace: Path, select: bool = True) -> str:
    session_id: str = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace),
                                                           "agent": "agent"})["session_id"]
    if select:
        client.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    return session_id


def wait_notification(client: Client, method: str, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = client.next_notification(timeout=deadline - time.monotonic())
        if message is not None and message["method"] == method:
            return message["params"]  # type: ignore[no-any-return]
    raise AssertionError(f"no {method} notification")


class Background:
    """A blocking client call run in a thread, so the test can answer it meanwhile."""

    def __init__(self, client: Client, method: str, params: dict[str, Any]) -> None:
        self.answer: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(client, method, params), daemon=True)
        self.thread.start()

    def _run(self, client: Client, method: str, params: dict[str, Any]) -> None:
        try:
            self.answer = client.call(method, params)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc

    def result(self, timeout: float = 15) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the call did not finish"
        if self.error:
            raise self.error
        return self.answer
