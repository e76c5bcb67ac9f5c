"""What an agent session keeps between hook calls: daemon session, intent, pending calls."""

# A hook is a new process per tool call, while a daemon session lives as long as the connection
# that opened it. So a small keeper process (hooks/keeper.py) holds that connection, and this
# file, under `$XDG_STATE_HOME/intentd/<agent>/`, tells each hook call which session to use.

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from intentd.daemon.utils.statedir import state_home

MAX_PENDING = 200  # authorized calls never reported (the agent crashed): oldest dropped first
MAX_TOLD = 20      # messages whose later report never came: oldest dropped first
LOCK_POLL_SECONDS = 0.02


class LockTimeout(TimeoutError):
    """Another process held the state file's lock for longer than the caller could wait."""


@dataclass
class AgentSession:
    key: str                              # the agent's session id
    workspace: str | None = None
    session_id: str | None = None         # the daemon session the keeper holds open
    keeper_pid: int | None = None
    intent_id: str | None = None          # selected again in a new keeper's session
    handshake_given: bool = False         # the handshake rode on a tool call's context
    pending: dict[str, list[str]] = field(default_factory=dict)  # call key -> authorized call_ids
    # call key -> what a report's answer could not tell the agent (the agent ignores that
    # answer), for the same call's next report, whose answer it reads
    told: dict[str, str] = field(default_factory=dict)
    updated_at: float = 0.0

    @classmethod
    def from_json(cls, key: str, data: Any) -> AgentSession:
        if not isinstance(data, dict):
            return cls(key)
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "key"}
        session = cls(key, **known)
        pending = session.pending if isinstance(session.pending, dict) else {}
        session.pending = {str(k): [str(i) for i in (v if isinstance(v, list) else [v])]
                           for k, v in pending.items()}
        told = session.told if isinstance(session.told, dict) else {}
        session.told = {str(k): str(v) for k, v in told.items()}
        return session


def state_dir(agent: str) -> Path:
    """One folder per agent: session ids of two agents never meet."""
    return Path(state_home()) / agent


def file_name(key: str) -> str:
    """A safe file name for the agent's session id (often a UUID, but it is untrusted input)."""
    if re.fullmatch(r"[A-Za-z0-9_-]{1,100}", key):
        return f"{key}.json"
    import hashlib  # here: session ids are almost always safe names already

    return f"sha-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


class StateFile:
    def __init__(self, agent: str, key: str, folder: Path | None = None) -> None:
        self.key = key
        self.folder = folder or state_dir(agent)
        self.path = self.folder / file_name(key)
        self.lock_path = self.path.with_suffix(".lock")

    def read(self) -> AgentSession:
        try:
            return AgentSession.from_json(self.key, json.loads(self.path.read_text()))
        except (OSError, ValueError):
            return AgentSession(self.key)

    @contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[AgentSession]:
        """Read, change and write back under an exclusive lock (hooks of parallel tool calls).
        LockTimeout when another process holds the lock for longer than `timeout` seconds."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(os.open(self.lock_path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as lock:
            self._acquire(lock.fileno(), timeout)
            try:
                session = self.read()
                yield session
                self._write(session)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _acquire(self, fd: int, timeout: float | None) -> None:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return
        # flock cannot time out: poll. Holders keep it for milliseconds, except a hook that is
        # starting a keeper, or a stuck process (the case the timeout is for).
        end = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                left = end - time.monotonic()
                if left <= 0:
                    raise LockTimeout(f"{self.lock_path} stayed locked by another process for "
                                      f"{timeout:.1f} s") from None
                time.sleep(min(LOCK_POLL_SECONDS, left))

    def _write(self, session: AgentSession) -> None:
        session.updated_at = time.time()
        while len(session.pending) > MAX_PENDING:
            session.pending.pop(next(iter(session.pending)))
        while len(session.told) > MAX_TOLD:
            session.told.pop(next(iter(session.told)))
        handle, tmp = tempfile.mkstemp(dir=self.folder, prefix=".state-")
        with os.fdopen(handle, "w") as out:
            json.dump(asdict(session), out)
        os.replace(tmp, self.path)

    def remove(self) -> None:
        for path in (self.path, self.lock_path):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
