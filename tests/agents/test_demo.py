"""`intentd demo`: the scripted session, in-process and through a real daemon."""

from __future__ import annotations

import pytest

from intentd.daemon.cli import main
from intentd.daemon.sandbox.landlock import FORCE_ABI_ENV, kernel_abi
from intentd.daemon.testing import DaemonProcess

STEPS = ["REFUSED at intent_gate", "ALLOWED: <intent_context>", "REFUSED at scope",
         "README.md unchanged: True", "REFUSED at repetition", "src/greet.py exists now: False"]
# step 5's command: its program writes README.md, outside the scope; the kernel refuses it
CONFINED = "PermissionError: [Errno 13] Permission denied: 'README.md'"


def test_the_demo_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "pipeline: in-process (no daemon runs: the script answers approvals itself)" in out
    assert "ALLOWED (approved by the demo script)" in out
    positions = [out.index(step) for step in STEPS]
    assert positions == sorted(positions)
    assert (CONFINED in out) is (kernel_abi() >= 1)


def test_the_demo_without_landlock_says_so_and_the_audit_undoes(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(FORCE_ABI_ENV, "0")
    assert main(["demo", "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "commands run UNCONFINED" in out and "undone: README.md (modified; brought back" in out
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
    assert (CONFINED in out) is (kernel_abi() >= 1)
