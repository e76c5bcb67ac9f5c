"""Running the real Cline CLI headless: a private home, a provider on a fake API, no hub.

`cline "PROMPT"` runs one task and exits, with tool auto-approval on by default. The provider
is written the way `cline auth -p openai -b URL` writes it ("openai-compatible" in
`~/.cline/data/settings/providers.json`). CLINE_SESSION_BACKEND_MODE=local keeps the session in
this process: by default the CLI starts a background hub daemon that outlives the run (and runs
the hooks there); a test of that mode stops it with `cline hub stop`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Every hook file name Cline CLI 3 runs (sdk core hook-file-config.ts); the VS Code extension
# runs these but SessionShutdown and TaskError.
HOOK_EVENTS = ("TaskStart", "TaskResume", "TaskCancel", "TaskComplete", "TaskError",
               "PreToolUse", "PostToolUse", "UserPromptSubmit", "PreCompact", "SessionShutdown")
PROVIDER = "openai-compatible"


def write_provider(home: Path, base_url: str, model: str) -> None:
    settings = home / ".cline" / "data" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "providers.json").write_text(json.dumps({
        "version": 1, "lastUsedProvider": PROVIDER, "modes": {},
        "providers": {PROVIDER: {
            "settings": {"provider": PROVIDER, "apiKey": "sk-fake", "model": model,
                         "baseUrl": base_url},
            "updatedAt": "2026-11-25T00:00:00.000Z", "tokenSource": "manual"}}}))


def cline_env(home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("CLINE_", "OPENAI_", "ANTHROPIC_"))}
    env.update({"HOME": str(home), "CLINE_SESSION_BACKEND_MODE": "local",
                "CLINE_NO_AUTO_UPDATE": "1", "NO_COLOR": "1"})
    env.update(extra)
    return env


def command(program: Path, model: str, prompt: str, *options: str) -> list[str]:
    return [str(program), "-P", PROVIDER, "-m", model, *options, prompt]
