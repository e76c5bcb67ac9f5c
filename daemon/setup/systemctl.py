"""Talking to the user's systemd manager, behind one small class that tests replace."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

Runner = Callable[[Sequence[str]], subprocess.CompletedProcess[str]]


def run_command(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)


def booted_with_systemd() -> bool:
    """sd_booted(3): systemd is the init system only if this folder exists."""
    return Path("/run/systemd/system").is_dir()


@dataclass
class Systemctl:
    """`systemctl --user …`; `runner` and `booted` are injectable so tests run nothing real."""

    runner: Runner = run_command
    booted: Callable[[], bool] = booted_with_systemd
    which: Callable[[str], str | None] = shutil.which
    calls: list[list[str]] = field(default_factory=list)

    def unavailable_reason(self) -> str | None:
        """Why the user manager cannot be used, or None when it answers."""
        if self.which("systemctl") is None:
            return "systemctl is not installed (this system does not use systemd)"
        if not self.booted():
            return "this machine was not started by systemd (a container, WSL or another init)"
        probe = self.user("show", "--property=Version")
        if probe.returncode != 0:
            detail = (probe.stderr or probe.stdout).strip().splitlines()
            return ("systemd's user manager does not answer"
                    + (f" ({detail[-1]})" if detail else "")
                    + "; is this a login session of this user?")
        return None

    def user(self, *args: str) -> subprocess.CompletedProcess[str]:
        argv = ["systemctl", "--user", *args]
        self.calls.append(argv)
        try:
            return self.runner(argv)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return subprocess.CompletedProcess(argv, 1, "", str(exc))
