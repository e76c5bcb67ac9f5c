"""Fixtures of the first-run tests: no test may run the real `systemctl --user`."""

from __future__ import annotations

from collections.abc import Sequence
from subprocess import CompletedProcess
from typing import Any

import pytest

from intentd.daemon.setup import systemctl


def _refuse(argv: Sequence[str]) -> CompletedProcess[str]:
    raise AssertionError(f"a test tried to run {' '.join(argv)} on this machine")


@pytest.fixture(autouse=True)
def _no_real_systemctl(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI builds `Systemctl()` at call time; here every one it builds refuses to run."""
    real = systemctl.Systemctl

    def guarded(*args: Any, **kwargs: Any) -> systemctl.Systemctl:
        kwargs.setdefault("runner", _refuse)
        return real(*args, **kwargs)

    monkeypatch.setattr(systemctl, "Systemctl", guarded)
