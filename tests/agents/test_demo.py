"""`intentd demo`: the scripted session, in-process and through a real daemon."""

from __future__ import annotations

import pytest

from intentd.daemon.cli import main
from intentd.daemon.testing import DaemonProcess

STEPS = ["REFUSED at intent_gate", "ALLOWED: <intent_context>", "REFUSED at scope",
         "REFUSED at repetition", "src/greet.py exists now: False"]


def test_the_demo_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "pipeline: in-process (no daemon runs: the script answers approvals itself)" in out
    assert "ALLOWED (approved by the demo script)" in out
    positions = [out.index(step) for step in STEPS]
    assert positions == sorted(positions)


def test_the_demo_through_the_daemon(daemon: DaemonProcess,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--socket", str(daemon.socket_path), "--yes"]) == 0
    out = capsys.readouterr().out
    assert "pipeline: daemon" in out and "is approved by the demo script (--yes)" in out
    assert "ALLOWED (approved by a person)" in out and "checkpoint cp-" in out
    positions = [out.index(step) for step in STEPS]
    assert positions == sorted(positions)
