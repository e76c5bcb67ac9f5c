"""Processes as /proc shows them: parent, start time and command line, for ancestry checks."""

# A pid alone can be reused once its process is gone; (pid, start time) cannot, so every
# process is known by both. The start time is field 22 of /proc/PID/stat (clock ticks since boot).

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
MAX_DEPTH = 128  # a process tree deeper than this is not one we can vouch for


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    start: int          # clock ticks after boot: with the pid, names the process for good
    comm: str
    argv: tuple[str, ...]
    env_names: frozenset[str] = frozenset()  # the names asked for that its environment holds

    @property
    def key(self) -> tuple[int, int]:
        return (self.pid, self.start)

    def describe(self) -> str:
        shown = " ".join(self.argv)[:120] or self.comm
        return f"pid {self.pid} ({shown})"


def read_proc(pid: int, proc: Path = PROC,
              env_wanted: frozenset[str] = frozenset()) -> Proc | None:
    """The process `pid`, or None when it is gone (or /proc cannot be read). `env_wanted`:
    which of these names its environment holds (as it was at exec) goes in `env_names`."""
    base = f"{proc}/{pid}"
    try:
        with open(f"{base}/stat", "rb") as handle:
            stat = handle.read().decode("utf-8", "replace")
        with open(f"{base}/cmdline", "rb") as handle:
            raw_argv = handle.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses: it ends at the last ")".
    open_at, close_at = stat.find("("), stat.rfind(")")
    fields = stat[close_at + 2:].split()
    if open_at < 0 or close_at < 0 or len(fields) < 20:
        return None
    try:
        ppid, start = int(fields[1]), int(fields[19])
    except ValueError:
        return None
    argv = tuple(a.decode("utf-8", "replace") for a in raw_argv.split(b"\0") if a)
    env_names = _env_names(f"{base}/environ", env_wanted) if env_wanted else frozenset()
    return Proc(pid, ppid, start, stat[open_at + 1:close_at], argv, env_names)


def _env_names(path: str, wanted: frozenset[str]) -> frozenset[str]:
    try:
        with open(path, "rb") as handle:
            raw = b"\0" + handle.read()
    except OSError:
        return frozenset()
    return frozenset(name for name in wanted if f"\0{name}=".encode() in raw)


def start_time(pid: int) -> int | None:
    found = read_proc(pid)
    return found.start if found else None


def ancestry(pid: int, proc: Path = PROC,
             env_wanted: frozenset[str] = frozenset()) -> list[Proc] | None:
    """The process and its ancestors up to the first process (pid 1), nearest first; None when
    any link below pid 1 cannot be read, so a caller can fail closed."""
    chain: list[Proc] = []
    current = read_proc(pid, proc, env_wanted)
    while current is not None and len(chain) < MAX_DEPTH:
        if chain and current.start > chain[-1].start:
            # A parent cannot start after its child: the parent died and its pid was reused.
            return None
        chain.append(current)
        if current.ppid <= 0:
            return chain
        parent = read_proc(current.ppid, proc, env_wanted)
        if parent is None and current.ppid == 1:
            # The first process never exits, and nothing is above it: the chain is whole. Only
            # its own entry is hidden (/proc mounted with hidepid: it is another user's), which
            # would otherwise lock the person's desktop out of person methods.
            return chain
        current = parent
    return None


def uptime_ticks(proc: Path = PROC) -> int | None:
    """Now, in the clock ticks after boot that start times use."""
    try:
        seconds = float((proc / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return int(seconds * os.sysconf("SC_CLK_TCK")) + 1
