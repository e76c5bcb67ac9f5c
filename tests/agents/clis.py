"""Real agent CLIs from the npm registry, installed once per version into a cache folder.

The end-to-end tests drive these programs against fake model APIs on loopback. Versions are
pinned: a new release that changes a hook format shows up when the pin is raised, on purpose.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

INSTALL_TIMEOUT = 600


@dataclass(frozen=True)
class Cli:
    package: str
    version: str
    command: str  # the name of its program in node_modules/.bin


CLAUDE_CODE = Cli("@anthropic-ai/claude-code", "2.1.331", "claude")
CODEX = Cli("@openai/codex", "0.169.0", "codex")
GEMINI = Cli("@google/gemini-cli", "0.61.0", "gemini")
CLINE = Cli("cline", "3.0.65", "cline")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "intentd-tests" / "npm"


def installed(cli: Cli) -> Path:
    """The path of `cli`'s program, installing it first if this machine has not yet.

    Skips when npm is missing (the test needs Node.js); fails when the install fails, since a
    registry that cannot be reached must not pass for a passing test.
    """
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed (these tests run a real agent CLI on Node.js)")
    folder = cache_root() / f"{cli.package.replace('/', '+')}@{cli.version}"
    program = folder / "node_modules" / ".bin" / cli.command
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test processes install it once
        if not program.exists():
            done = subprocess.run(
                [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund",
                 "--loglevel=error", f"{cli.package}@{cli.version}"],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
            if done.returncode != 0 or not program.exists():
                pytest.fail(f"npm install {cli.package}@{cli.version} failed:\n{done.stderr}")
    return program
