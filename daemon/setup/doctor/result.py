"""The outcome of one doctor check: a status, what was found, and what to do about it."""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

Status = Literal["ok", "warn", "fail", "skip"]


@dataclass(frozen=True)
class CheckResult:
    """`warn` and `skip` do not fail the doctor: only `fail` gives exit code 1."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def ok(name: str, detail: str) -> CheckResult:
    return CheckResult(name, "ok", detail)


def warn(name: str, detail: str, fix: str) -> CheckResult:
    return CheckResult(name, "warn", detail, fix)


def fail(name: str, detail: str, fix: str) -> CheckResult:
    return CheckResult(name, "fail", detail, fix)


def skip(name: str, detail: str) -> CheckResult:
    return CheckResult(name, "skip", detail)


def private_problem(path: Path, st: os.stat_result, wanted: int) -> tuple[str, str] | None:
    """(what is wrong, the fix) when `path` is not owned by this user or is open to others."""
    if st.st_uid != os.getuid():
        return (f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()})",
                f"remove it (as its owner or root), then start intentd again: `rm -r {path}`")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        return (f"{path} has mode {mode:04o}: other users may reach it",
                f"`chmod {wanted:o} {path}`")
    return None
