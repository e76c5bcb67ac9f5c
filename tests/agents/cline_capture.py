"""Capture the hook payloads the real Cline CLI sends, as test fixtures.

    python -m tests.agents.cline_capture tests/agents/cline_fixtures/cli

Runs the pinned Cline CLI (clis.CLINE) headless in a temporary home and workspace against a
fake Chat Completions API that scripts one call of each tool, with hook files that only save
their stdin and allow. Each payload is written as `<Event>-<tool>.json`, the workspace path
replaced by SHOWN_WORKSPACE. Run it again when the pin is raised, and read the diff.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.agents.cline_run import HOOK_EVENTS, cline_env, write_provider
from tests.agents.clis import CLINE, installed
from tests.agents.fake_chat import FakeChatAPI, Reply, tool_call

SHOWN_WORKSPACE = "/home/me/proj"
DUMP_HOOK = """#!/bin/sh
cat > "{folder}/$(date +%s%N)-{event}.json"
echo '{{"cancel": false}}'
"""


def script(ws: str) -> list[Reply]:
    return [
        Reply("reading", [tool_call("read_files", files=[{"path": f"{ws}/hello.txt"}])]),
        Reply("", [tool_call("editor", path=f"{ws}/new.txt", new_text="brand new\n")]),
        Reply("", [tool_call("editor", path=f"{ws}/hello.txt", old_text="world",
                             new_text="there")]),
        Reply("", [tool_call("editor", path=f"{ws}/hello.txt", new_text="top\n",
                             insert_line=1)]),
        Reply("", [tool_call("run_commands", commands=["echo hi > out.txt", "ls"])]),
        Reply("", [tool_call("search_codebase", queries=["hello"])]),
        Reply("done."),
    ]


def patch_script(ws: str) -> list[Reply]:
    """A GPT-named model is given apply_patch instead of editor."""
    patch = "*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\n"
    return [Reply("", [tool_call("apply_patch", input=patch)]), Reply("done.")]


def run(out: Path, model: str, steps: Any) -> None:
    cli = installed(CLINE)
    with tempfile.TemporaryDirectory() as tmp:
        home, ws, dumps = Path(tmp, "home"), Path(tmp, "proj"), Path(tmp, "dumps")
        for folder in (home, ws / ".clinerules" / "hooks", dumps):
            folder.mkdir(parents=True)
        (ws / "hello.txt").write_text("hello\nworld\n")
        for event in HOOK_EVENTS:
            hook = ws / ".clinerules" / "hooks" / event
            hook.write_text(DUMP_HOOK.format(folder=dumps, event=event))
            hook.chmod(0o755)
        with FakeChatAPI(steps(str(ws))) as api:
            write_provider(home, api.url, model)
            subprocess.run([str(cli), "-P", "openai-compatible", "-m", model, "do it"], cwd=ws,
                           env=cline_env(home), stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=120, check=False)
        for dump in sorted(dumps.iterdir()):
            text = dump.read_text().replace(str(ws), SHOWN_WORKSPACE)
            payload = json.loads(text)
            event = dump.stem.split("-", 1)[1]
            call = payload.get("tool_call") or payload.get("tool_result") or {}
            name = f"{event}-{call['name']}{editor_kind(call)}" if call else event
            target = out / f"{name}.json"
            if not target.exists():  # the second run's task events are the first's again
                target.write_text(json.dumps(payload, indent=2) + "\n")


def editor_kind(call: dict[str, Any]) -> str:
    if call.get("name") != "editor":
        return ""
    given = call.get("input") or {}
    if given.get("insert_line") is not None:
        return "_insert"
    return "_replace" if given.get("old_text") is not None else "_create"


def main() -> None:
    out = Path(sys.argv[1])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    run(out, "fake-model", script)
    run(out, "gpt-fake", patch_script)
    print(f"{len(list(out.iterdir()))} payloads in {out}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
