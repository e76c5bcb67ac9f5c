"""Runs the real Gemini CLI headless against the fake Gemini API, reaching nothing past loopback.

Its HOME is a folder of the test's: the user settings turn off telemetry, usage statistics,
update checks and the IDE link, pick API-key auth (a fake key), and the workspace is trusted
for the run (GEMINI_CLI_TRUST_WORKSPACE). `--approval-mode yolo`: Gemini's own prompts are off
(a headless run has none to show), so intentd's hooks are the only gate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.agents.fake_gemini import FAKE_KEY
from tests.agents.fake_gemini import GeminiHome as _Home

MODEL = "gemini-2.5-flash"
RUN_TIMEOUT = 240


def make_home(home: Path, **extra: Any) -> Path:
    """A HOME whose ~/.gemini/settings.json keeps Gemini CLI on loopback; returns the file."""
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**_Home.base_settings(), **extra}, indent=2) + "\n")
    return path


def environment(home: Path, api_url: str, state: Path) -> dict[str, str]:
    """Only what Gemini and the hook need: this Python's folder first on PATH (`intentd`)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {"PATH": path, "HOME": str(home), "GEMINI_API_KEY": FAKE_KEY,
            "GOOGLE_GEMINI_BASE_URL": api_url, "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "TERM": "dumb", "NO_COLOR": "1", "XDG_STATE_HOME": str(state),
            "LANG": os.environ.get("LANG", "C.UTF-8")}


def run_gemini(program: Path, ws: Path, env: dict[str, str], prompt: str,
               *args: str, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(program), "-p", prompt, "--approval-mode", "yolo", "-m", MODEL,
         "--output-format", "json", *args],
        cwd=ws, env=env, capture_output=True, text=True, timeout=timeout, check=False)
