"""One command's confinement: its Landlock rule set, its private temp folder, and what to tell."""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from intentd.daemon.sandbox.landlock import Ruleset, kernel_abi, restrict_self
from intentd.daemon.sandbox.scope_dirs import PROTECTED, covered_prefixes
from intentd.daemon.sandbox.status import unconfined_note

DEVICES = ("/dev/null", "/dev/tty")


def _load_thread_exit_support() -> None:
    """CPython ends each thread with pthread_exit, which loads libgcc_s the first time; with no
    file descriptor left (an agent can use them up) that load fails and glibc aborts the whole
    process. The thread that starts a confined command may be the first to end: load it now."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libgcc_s.so.1")
        except OSError:
            pass  # not glibc's layout (musl needs none): nothing to load


_load_thread_exit_support()
T = TypeVar("T")


class SandboxError(Exception):
    """Landlock is there but the confinement could not be built: the command must not run."""


@dataclass(frozen=True)
class SandboxRequest:
    """What a command may do: write in the folders owned_scope covers, and (maybe) use TCP."""

    root: str
    owned_scope: tuple[str, ...] = ()
    network: bool = False


@dataclass
class Confinement:
    request: SandboxRequest
    tmpdir: str
    abi: int = 0
    ruleset: Ruleset | None = None
    writable: list[str] = field(default_factory=list)

    @property
    def confined(self) -> bool:
        return self.ruleset is not None

    def env(self) -> dict[str, str]:
        """TMPDIR and friends point at the private temp folder; caches go there too, since the
        user's ~/.cache is not writable from inside."""
        return {"TMPDIR": self.tmpdir, "TMP": self.tmpdir, "TEMP": self.tmpdir,
                "XDG_CACHE_HOME": os.path.join(self.tmpdir, "cache")}

    def spawn(self, start: Callable[[], T]) -> T:
        """Call start (which starts the command's process) so the process is born confined.

        Landlock confines the thread that asks and every process it then starts, nothing else.
        So a fresh thread enters the sandbox, starts the process (with vfork, as an unconfined
        Popen would: no Python code runs between fork and exec) and ends; the daemon's other
        threads are untouched."""
        if self.ruleset is None:
            return start()
        fd = self.ruleset.fd
        started: list[T] = []
        failed: list[BaseException] = []

        def enter_and_start() -> None:
            try:
                restrict_self(fd)
                started.append(start())
            except BaseException as exc:  # handed to the caller's thread
                failed.append(exc)

        thread = threading.Thread(target=enter_and_start, name="start confined command")
        thread.start()
        thread.join()
        if failed:
            raise failed[0]
        return started[0]

    def report(self) -> dict[str, Any]:
        """What the receipt records; an unconfined run says so and why."""
        network = "allow" if self.request.network else "deny"
        if self.ruleset is None:
            return {"confined": False, "note": unconfined_note(), "network": network,
                    "network_enforced": False}
        return {"confined": True, "landlock_abi": self.abi, "writable": self.writable,
                "network": network, "network_enforced": self.ruleset.network_enforced}

    def close(self) -> None:
        if self.ruleset is not None:
            self.ruleset.close()
        # removing a folder can take milliseconds (an ext4 journal): not on the command's time
        threading.Thread(target=shutil.rmtree, args=(self.tmpdir, True), daemon=True,
                         name="remove command TMPDIR").start()


def confine(request: SandboxRequest) -> Confinement:
    """Build the confinement of one command; unconfined (and saying so) where Landlock is absent.
    Raises SandboxError when Landlock is there but a rule cannot be added: fail closed."""
    confinement = Confinement(request, tempfile.mkdtemp(prefix="intentd-cmd-"))
    confinement.abi = abi = kernel_abi()
    if abi <= 0:
        return confinement
    try:
        ruleset = Ruleset(abi, deny_tcp=not request.network)
        confinement.ruleset = ruleset
        _grant(confinement, ruleset)
    except (OSError, ValueError) as exc:
        confinement.close()
        raise SandboxError(f"the command's Landlock confinement could not be built: {exc}") from exc
    return confinement


def _grant(confinement: Confinement, ruleset: Ruleset) -> None:
    root = os.path.realpath(confinement.request.root)
    forbidden = {os.path.join(root, name) for name in PROTECTED}
    for prefix in covered_prefixes(confinement.request.owned_scope, root):
        path = os.path.join(root, prefix) if prefix else root
        _grant_folder(ruleset, path, root, forbidden, confinement.writable)
    for device in sorted({*DEVICES, *_terminals()}):
        if _grant_path(ruleset, os.path.realpath(device), directory=False):
            confinement.writable.append(device)
    if _grant_path(ruleset, os.path.realpath(confinement.tmpdir), directory=True):
        confinement.writable.append("$TMPDIR")


def _grant_folder(ruleset: Ruleset, path: str, root: str, forbidden: set[str],
                  shown: list[str]) -> None:
    """Grant writing beneath path unless a protected folder is in it: then each child but that."""
    real = os.path.realpath(path)
    if not (real == root or real.startswith(root + os.sep)) or not os.path.isdir(real):
        return  # missing, or a symlink out of the workspace: nothing is granted
    if any(real == f or real.startswith(f + os.sep) for f in forbidden):
        return
    local = {os.path.join(real, n) for n in PROTECTED if os.path.lexists(os.path.join(real, n))}
    inside = {f for f in forbidden | local if f.startswith(real + os.sep)}
    if not inside:
        if _grant_path(ruleset, real, directory=True):
            shown.append(os.path.relpath(real, root))
        return
    with os.scandir(real) as entries:
        children = sorted(entry.path for entry in entries)
    for child in children:
        if child in inside:
            continue
        if any(f.startswith(child + os.sep) for f in inside):
            _grant_folder(ruleset, child, root, forbidden, shown)
        elif _grant_path(ruleset, child, directory=None):
            shown.append(os.path.relpath(child, root))


def _grant_path(ruleset: Ruleset, path: str, *, directory: bool | None) -> bool:
    """Add a rule for the folder or file at path, a path already resolved and checked (never a
    symlink: its target could be anything); directory None takes whichever it is. False when
    there is nothing to grant."""
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        mode = os.fstat(fd).st_mode
        is_dir = stat.S_ISDIR(mode)
        usable = is_dir or stat.S_ISREG(mode) or stat.S_ISCHR(mode)
        if not usable or (directory is not None and directory != is_dir):
            return False
        # the file opened must be the one checked: a symlink swapped in between would grant
        # another
        if os.readlink(f"/proc/self/fd/{fd}") != path:
            return False
        ruleset.allow_writes(fd, is_dir)
        return True
    finally:
        os.close(fd)


def _terminals() -> set[str]:
    """The terminal the daemon (or `intentd run`) was started from, if any."""
    found = set()
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.isatty():
                found.add(os.ttyname(stream.fileno()))
        except (OSError, ValueError):
            continue
    return found
