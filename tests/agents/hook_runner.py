"""Runs `intentd hook AGENT` in-process as an agent would run the command: JSON in, answer out."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.cli import main


@dataclass(frozen=True)
class Answer:
    """What the hook printed and its exit code."""

    out: Any            # stdout parsed as JSON (None when empty)
    err: str
    code: int


class HookRunner:
    def __init__(self, agent: str, socket_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str], *options: str) -> None:
        self.agent, self.socket_path, self.options = agent, socket_path, options
        self.monkeypatch, self.capsys = monkeypatch, capsys

    def __call__(self, payload: Any, *extra: str) -> Answer:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
        self.capsys.readouterr()
        code = main(["hook", self.agent, *extra, "--socket", str(self.socket_path),
                     *self.options])
        captured = self.capsys.readouterr()
        out = captured.out.strip()
        return Answer(json.loads(out) if out else None, captured.err, code)
