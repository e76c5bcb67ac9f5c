"""Factories for tests and benchmarks: workspaces with intents and policy, sessions, calls, daemons."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from intentd.daemon.engine.engine import Engine, Evaluation
from intentd.daemon.engine.session import Mode, Session


def make_intent(id: str = "INT-1", *, name: str | None = None, status: str = "IN_PROGRESS",
                owned_scope: list[str] | None = None, constraints: list[str] | None = None,
                acceptance_criteria: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": id, "name": name or f"intent {id}", "status": status,
            "owned_scope": ["src/**"] if owned_scope is None else owned_scope,
            "constraints": constraints or [], "acceptance_criteria": acceptance_criteria or [],
            **extra}


def write_intents(root: Path, *intents: dict[str, Any]) -> Path:
    path = root / ".orchestration" / "active_intents.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"active_intents": list(intents)}, sort_keys=False))
    return path


def write_policy(root: Path, policy: dict[str, Any]) -> Path:
    path = root / ".orchestration" / "policy.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(policy, sort_keys=False))
    return path


def make_workspace(root: Path, *intents: dict[str, Any], policy: dict[str, Any] | None = None,
                   files: dict[str, str] | None = None) -> Path:
    """A workspace folder with an intents file (one default intent unless given), policy, files."""
    root.mkdir(parents=True, exist_ok=True)
    write_intents(root, *(intents or (make_intent(),)))
    if policy is not None:
        write_policy(root, policy)
    for relative, text in (files or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def make_call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def make_session(engine: Engine, root: Path, mode: Mode = Mode.ACT) -> Session:
    return engine.open_session(root, agent="test", mode=mode)


def decide(engine: Engine, session: Session, tool: str, **args: Any) -> Evaluation:
    """Evaluate one call and apply what a dry run applies (selection, read hashes)."""
    ev = engine.evaluate(session, tool, args)
    engine.apply_dry_run(ev)
    return ev


class DaemonProcess:
    """A real `intentd serve` in a subprocess, for end-to-end tests and benchmarks."""

    def __init__(self, socket_path: Path, state_dir: Path, extra_env: dict[str, str] | None = None):
        self.socket_path, self.state_dir = socket_path, state_dir
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 20.0) -> DaemonProcess:
        env = {**os.environ, "XDG_STATE_HOME": str(self.state_dir), **self.extra_env}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "intentd.daemon.cli", "serve", "--socket", str(self.socket_path)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while not self.answers():
            if self.process.poll() is not None:
                _, err = self.process.communicate()
                raise RuntimeError(f"the daemon exited: {err.decode(errors='replace')}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError("the daemon did not start in time")
            time.sleep(0.02)
        return self

    def answers(self) -> bool:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(self.socket_path))
            return True
        except OSError:
            return False
        finally:
            probe.close()

    def stop(self, timeout: float = 10.0) -> int | None:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.communicate()
        return self.process.returncode

    def __enter__(self) -> DaemonProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
