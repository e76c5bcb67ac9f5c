"""Helpers for the robustness tests: hostile wire lines, sessions, waiting on a condition."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client


class RawClient:
    """A client that sends exactly the JSON text it is given, as an agent's own code could.

    `json.dumps` escapes lone surrogates as `\\udcff`: valid JSON that decodes to text
    which cannot be encoded as UTF-8 again.
    """

    def __init__(self, socket_path: Path, timeout: float = 20) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(socket_path))
        self.buffer = b""
        self.next_id = 1

    def send(self, method: str, params: dict[str, Any]) -> int:
        request_id, self.next_id = self.next_id, self.next_id + 1
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        self.sock.sendall(line.encode("ascii") + b"\n")
        return request_id

    def answer(self, request_id: int) -> dict[str, Any]:
        while True:
            while b"\n" not in self.buffer:
                chunk = self.sock.recv(65536)
                assert chunk, "the daemon closed the connection"
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.answer(self.send(method, params))

    def close(self) -> None:
        self.sock.close()


def open_session(client: Client, workspace: Path, select: bool = True) -> str:
    session_id: str = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace),
                                                           "agent": "agent"})["session_id"]
    if select:
        client.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
    return session_id


def wait_until(condition: Callable[[], bool], timeout: float = 10, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
