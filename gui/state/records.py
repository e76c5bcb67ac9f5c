"""Immutable records parsed from the daemon's JSON (docs/protocol.md), tolerant of missing keys."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


def _str(data: dict[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def _strs(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _seconds(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def workspace_name(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or path


def local_clock(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).strftime("%H:%M:%S") if seconds else ""


@dataclass(frozen=True)
class ConfigError:
    file: str
    line: int | None
    message: str

    @classmethod
    def from_json(cls, data: Any) -> ConfigError | None:
        if not isinstance(data, dict):
            return None
        line = data.get("line")
        return cls(_str(data, "file"), line if isinstance(line, int) else None,
                   _str(data, "message"))

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Approval:
    id: str
    workspace: str
    session_id: str
    agent: str
    intent_id: str | None
    tool: str
    args: dict[str, Any]
    stage: str
    reason: str
    diff: str | None
    created_at: float
    batch: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Approval:
        return cls(
            id=_str(data, "id"), workspace=_str(data, "workspace"),
            session_id=_str(data, "session_id"), agent=_str(data, "agent"),
            intent_id=data.get("intent_id") or None, tool=_str(data, "tool"),
            args=_dict(data.get("args")), stage=_str(data, "stage"),
            reason=_str(data, "reason"),
            diff=data["diff"] if isinstance(data.get("diff"), str) else None,
            created_at=_seconds(data.get("created_at")), batch=data.get("batch") or None)

    @property
    def target(self) -> str:
        """What the call acts on: a path, a command, or the first arguments."""
        for key in ("path", "command", "cmd", "url", "server_name"):
            if isinstance(self.args.get(key), str):
                return str(self.args[key])
        return ", ".join(f"{k}={v!r}"[:60] for k, v in list(self.args.items())[:2])

    @property
    def target_line(self) -> str:
        """The first line of the target: what fits a table cell or a heading."""
        return self.target.splitlines()[0] if self.target else ""

    @property
    def session_label(self) -> str:
        return f"{self.session_id} ({self.agent or 'unknown agent'})"


@dataclass(frozen=True)
class Intent:
    id: str
    name: str
    status: str
    owned_scope: tuple[str, ...]
    constraints: tuple[str, ...]
    acceptance_criteria: tuple[str, ...]
    selectable: bool
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Intent:
        return cls(id=_str(data, "id"), name=_str(data, "name"), status=_str(data, "status"),
                   owned_scope=_strs(data, "owned_scope"),
                   constraints=_strs(data, "constraints"),
                   acceptance_criteria=_strs(data, "acceptance_criteria"),
                   selectable=bool(data.get("selectable", False)),
                   extra=_dict(data.get("extra")))


@dataclass(frozen=True)
class LedgerEntry:
    call_id: str
    time: str  # ISO 8601, UTC
    workspace: str
    session: str
    agent: str
    intent_id: str | None
    tool: str
    decision: str
    stage: str
    reason: str
    approved_by: str | None
    result: str
    # a command's sandbox: True confined, False ran unconfined (sandbox_note says why), None n/a
    confined: bool | None = None
    sandbox_note: str = ""
    undone: tuple[str, ...] = ()        # changes outside the scope the audit undid
    out_of_scope: tuple[str, ...] = ()  # changes outside the scope it found (undone or not)
    checkpoint_id: str | None = None  # the checkpoint taken before it ran (destructive calls)
    checkpoint_coverage: str = ""  # how its checkpoint found changes, when not by the watcher alone

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LedgerEntry:
        intent, receipt = _dict(data.get("intent")), _dict(data.get("receipt"))
        facts = _dict(receipt.get("data"))
        sandbox, audit = _dict(facts.get("sandbox")), _dict(facts.get("scope_audit"))
        confined = sandbox.get("confined")
        return cls(call_id=_str(intent, "id"), time=_str(intent, "time"),
                   workspace=_str(intent, "workspace"), session=_str(intent, "session"),
                   agent=_str(intent, "agent"), intent_id=intent.get("intent_id") or None,
                   tool=_str(intent, "tool"), decision=_str(data, "decision"),
                   stage=_str(data, "stage"), reason=_str(data, "reason"),
                   approved_by=data.get("approved_by") or None,
                   result=_str(receipt, "result"),
                   confined=confined if isinstance(confined, bool) else None,
                   sandbox_note=_str(sandbox, "note"), undone=_strs(audit, "undone"),
                   out_of_scope=tuple(str(item[0]) for item in audit.get("out_of_scope") or []
                                      if isinstance(item, list) and item),
                   checkpoint_id=_str(receipt, "checkpoint_id") or None,
                   checkpoint_coverage=_str(receipt, "checkpoint_coverage"))

    @property
    def local_time(self) -> str:
        try:
            return datetime.fromisoformat(self.time).astimezone().strftime("%H:%M:%S")
        except ValueError:
            return self.time


@dataclass(frozen=True)
class Checkpoint:
    id: str
    created_at: float
    label: str
    kind: str
    files: tuple[str, ...]
    coverage: str = ""  # how it found changes, when not by the file watcher alone (a scan)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoint:
        return cls(id=_str(data, "id"), created_at=_seconds(data.get("created_at")),
                   label=_str(data, "label"), kind=_str(data, "kind"),
                   files=_strs(data, "files"), coverage=_str(data, "coverage"))


@dataclass(frozen=True)
class WatchCoverage:
    """How much of a workspace the daemon's file watcher sees (`checkpoints/list` "coverage")."""

    mode: str  # "watched", "partial" (some folders scanned instead) or "scanning" (all are)
    watched_folders: int
    unwatched_count: int
    unwatched: tuple[str, ...]  # the first few
    reason: str
    overflows: int = 0

    @classmethod
    def from_json(cls, data: Any) -> WatchCoverage | None:
        if not isinstance(data, dict) or data.get("mode") not in ("watched", "partial",
                                                                  "scanning"):
            return None
        return cls(mode=str(data["mode"]), watched_folders=_int(data.get("watched_folders")),
                   unwatched_count=_int(data.get("unwatched_count")),
                   unwatched=_strs(data, "unwatched"), reason=_str(data, "reason"),
                   overflows=_int(data.get("overflows")))

    @property
    def blind_spots(self) -> bool:
        """Whether some command checkpoints scan instead of reading what the watcher saw."""
        return self.mode != "watched"


@dataclass(frozen=True)
class FileDiff:
    path: str
    status: str
    unified: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileDiff:
        return cls(_str(data, "path"), _str(data, "status"), _str(data, "unified"))
