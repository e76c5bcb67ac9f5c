"""Keep what an agent runs in our process tree: become a child subreaper, and reap orphans."""

# A command that double-forks leaves an orphan; the kernel hands it to the nearest subreaper
# above it instead of init, so its ancestry still shows who started it (sides.py). Orphans
# handed to us must be reaped, but never a child that subprocess still waits for: its exit
# code would be lost (Popen takes a vanished child as exit 0). So the pids subprocess starts
# are tracked, and only other zombies are reaped. (Everything intentd starts goes through
# subprocess; a child made with os.fork directly would be taken for an orphan.)

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from intentd.daemon.trust.procs import PROC, read_proc

log = logging.getLogger(__name__)
PR_SET_CHILD_SUBREAPER = 36
SWEEP_SECONDS = 5.0

_spawned: dict[int, int] = {}  # pid -> start time, of children subprocess started
_spawned_lock = threading.Lock()
_installed = False
_sweeper: threading.Thread | None = None


def become_subreaper() -> bool:
    """True when orphans of our descendants now come to us (Linux only)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def track_subprocess_children() -> None:
    """Record every child subprocess starts in this process (idempotent)."""
    global _installed
    if _installed:
        return
    original = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        # Under the lock: a sweep never sees a child that is started but not yet recorded.
        with _spawned_lock:
            original(self, *args, **kwargs)
            started = read_proc(self.pid)
            _spawned[self.pid] = started.start if started else -1

    subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]
    _installed = True


def _children() -> list[int]:
    found: set[int] = set()
    try:
        for task in (PROC / "self" / "task").iterdir():
            found.update(int(p) for p in (task / "children").read_text().split())
    except (OSError, ValueError):
        pass
    return sorted(found)


def reap_orphans() -> int:
    """Reap zombie children that subprocess did not start; the number reaped."""
    reaped = 0
    with _spawned_lock:
        children = _children()
        for pid in [p for p in _spawned if p not in children]:
            del _spawned[pid]  # subprocess has reaped it
        for pid in children:
            state = _state(pid)
            if state is None or state[0] != "Z":
                continue
            if pid in _spawned and _spawned[pid] in (state[1], -1):
                continue  # subprocess will wait for it
            try:
                os.waitpid(pid, os.WNOHANG)
                reaped += 1
            except ChildProcessError:
                pass
    return reaped


def _state(pid: int) -> tuple[str, int] | None:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


def start_reaping() -> threading.Thread | None:
    """Subreaper, tracked children, and a background sweep for orphans (once per process);
    None when the system has no subreapers (not Linux)."""
    global _sweeper
    track_subprocess_children()
    if _sweeper is not None:
        return _sweeper
    if not Path(PROC / "self" / "task").is_dir() or not become_subreaper():
        return None
    halt = threading.Event()  # never set: the sweep lives as long as the process

    def sweep() -> None:
        while not halt.wait(SWEEP_SECONDS):
            try:
                reap_orphans()
            except Exception:  # noqa: BLE001 - a failed sweep must not stop the next one
                log.exception("reaping orphaned processes failed")

    _sweeper = threading.Thread(target=sweep, name="intentd-reaper", daemon=True)
    _sweeper.start()
    return _sweeper
