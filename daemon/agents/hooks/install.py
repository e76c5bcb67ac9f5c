"""`intentd hook install|uninstall AGENT`: the framework; each agent's Installer computes the text.

An Installer only reads the agent's files and returns the Changes it wants; this module writes
them (each atomically: temp file, fsync, rename) or, for `--dry-run`, prints them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

NEW_FILE_MODE = 0o644
CLI_MODULE = "intentd.daemon.cli"


@dataclass(frozen=True)
class Scope:
    """Where to wire the agent: one workspace folder, or the user's own settings."""

    root: Path | None   # the workspace folder; None: user level
    home: Path          # the user's home folder (tests pass a temporary one)

    @property
    def user(self) -> bool:
        return self.root is None

    def base(self) -> Path:
        """The folder the agent's config folder (`.claude`, `.cursor`, ...) lives in."""
        return self.root if self.root is not None else self.home

    def describe(self) -> str:
        return "user level" if self.root is None else f"workspace {self.root}"


@dataclass(frozen=True)
class HookCommand:
    """How the agent should run intentd: `intentd` when it is this installation's, else this
    Python with `-m intentd.daemon.cli` (a virtual environment not on the agent's PATH)."""

    argv: tuple[str, ...]
    socket: Path | None = None

    def line(self, agent: str, event: str | None = None, *extra: str) -> str:
        words = [*self.argv, "hook", agent, *([event] if event else [])]
        if self.socket is not None:
            words += ["--socket", str(self.socket)]
        return shlex.join([*words, *extra])

    @classmethod
    def detect(cls, socket: Path | None = None, command: str | None = None) -> HookCommand:
        if command:
            return cls(tuple(shlex.split(command)), socket)
        found = shutil.which("intentd")
        if found and _runs_this_python(Path(found)):
            return cls(("intentd",), socket)
        return cls((sys.executable, "-m", CLI_MODULE), socket)


def _runs_this_python(script: Path) -> bool:
    """Whether the `intentd` script on PATH is this installation's (its #! is this Python)."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(4096).decode("utf-8", "replace")
    except OSError:
        return False
    if not first.startswith("#!"):
        return False
    words = first[2:].split()
    return bool(words) and os.path.realpath(words[0]) == os.path.realpath(sys.executable)


def is_intentd_hook(command: object, agent: str) -> bool:
    """Whether a hook command line runs `intentd hook AGENT` (any spelling of intentd)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for index in range(len(words) - 2):
        program = os.path.basename(words[index])
        if (program == "intentd" or words[index] == CLI_MODULE) and words[index + 1] == "hook" \
                and words[index + 2] == agent:
            return True
    return False


def command_problem(command: object) -> str | None:
    """Why a hook command would not start: its program is not found (None when it would)."""
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return f"the command {command!r} does not parse: {exc}"
    if not words:
        return "an empty command"
    program = os.path.expanduser(words[0])
    found = (os.access(program, os.X_OK) if os.sep in program else shutil.which(program))
    return None if found else f"`{words[0]}` is not found (the command `{command}`)"


@dataclass(frozen=True)
class Change:
    """One file's new text (None: the file is removed)."""

    path: Path
    text: str | None
    mode: int = NEW_FILE_MODE   # for a new file; an existing one keeps its mode


@dataclass(frozen=True)
class Wiring:
    """One config file of an agent, as `intentd doctor` reports it."""

    path: Path
    wired: bool                       # intentd's entries are in it
    problems: tuple[str, ...] = ()    # empty when the file is valid and complete


class Installer(Protocol):
    def install(self, scope: Scope, command: HookCommand) -> list[Change]: ...

    def uninstall(self, scope: Scope) -> list[Change]: ...

    def inspect(self, scope: Scope) -> list[Wiring]: ...


class InstallError(Exception):
    """A config file cannot be changed safely (not valid JSON, a value of the wrong kind)."""


def read_text(path: Path) -> str | None:
    """The file's text; None when there is none. A symlink is followed (dotfile managers)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None


def apply(changes: list[Change], dry_run: bool, out: TextIO) -> None:
    """Write every change, or print it. A file whose text is unchanged is left alone."""
    from intentd.daemon.tools.fileio import atomic_write  # not on the hook's path

    for change in changes:
        target = change.path.resolve() if change.path.is_symlink() else change.path
        if change.text == read_text(target):
            out.write(f"{change.path}: unchanged\n")
            continue
        if dry_run:
            if change.text is None:
                out.write(f"{change.path}: would be removed\n")
            else:
                out.write(f"--- {change.path} (would be written) ---\n{change.text}")
                if not change.text.endswith("\n"):
                    out.write("\n")
            continue
        if change.text is None:
            target.unlink(missing_ok=True)
            out.write(f"{change.path}: removed\n")
            continue
        mode = None if target.exists() else change.mode
        atomic_write(str(target), change.text, mode=mode)
        out.write(f"{change.path}: written\n")
