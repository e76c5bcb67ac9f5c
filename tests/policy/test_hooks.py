"""Pre- and post-hooks: real scripts get the call as JSON; anything but a clean answer vetoes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import make_intent, make_session, make_workspace

VETO_WRITES = """#!/bin/sh
# An example pre-hook: refuses writes to migrations, says nothing about anything else.
payload=$(cat)
case "$payload" in
  *'"path": "src/migrations/'*) echo '{"decision": "deny", "reason": "migrations are frozen"}' ;;
esac
"""


def workspace_with_hooks(tmp_path: Path, pre: list[Any], post: list[Any] | None = None) -> Path:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]),
                          policy={"auto_approve": {"edit": True},
                                  "hooks": {"pre_tool": pre, "post_tool": post or []}},
                          files={"hooks/veto.sh": VETO_WRITES})
    (root / "hooks" / "veto.sh").chmod(0o755)
    return root


def write(engine: Engine, root: Path, path: str) -> Any:
    session = make_session(engine, root)
    engine.run(engine.evaluate(session, "select_active_intent", {"intent_id": "INT-1"}), "auto")
    ev = engine.evaluate(session, "write_to_file", {"path": path, "content": "x"})
    assert ev.decision.allowed, ev.decision
    return engine.run(ev, "auto")


def test_a_pre_hook_vetoes_with_its_reason(tmp_path: Path, engine: Engine) -> None:
    root = workspace_with_hooks(tmp_path, [{"command": "./hooks/veto.sh",
                                            "matcher": "write_to_file|replace_in_file"}])
    outcome = write(engine, root, "src/migrations/001.sql")
    assert (outcome.decision.verdict.value, outcome.decision.stage) == ("deny", "pre_hook")
    assert "migrations are frozen" in outcome.decision.reason
    assert not (root / "src/migrations/001.sql").exists()
    assert write(engine, root, "src/app.py").result.ok, "an empty answer lets the call through"


@pytest.mark.parametrize(("command", "fragment"), [
    ("exit 3", "exit code 3"),
    ("echo not json", "not JSON"),
    ("echo '{\"decision\": \"maybe\"}'", "expected"),
    ("sleep 5", "timed out"),
])
def test_a_broken_pre_hook_vetoes(tmp_path: Path, engine: Engine, command: str,
                                  fragment: str) -> None:
    root = workspace_with_hooks(tmp_path, [{"command": command, "timeout": 0.5,
                                            "matcher": "write_to_file"}])
    outcome = write(engine, root, "src/app.py")
    assert outcome.decision.stage == "pre_hook" and fragment in outcome.decision.reason
    assert not (root / "src/app.py").exists()


def test_a_matcher_limits_which_tools_a_hook_sees(tmp_path: Path, engine: Engine) -> None:
    root = workspace_with_hooks(tmp_path, [{"command": "exit 1", "matcher": "execute_command"}])
    assert write(engine, root, "src/app.py").result.ok


def test_post_hooks_see_the_result_and_cannot_undo_it(tmp_path: Path, engine: Engine) -> None:
    log = tmp_path / "post.json"
    root = workspace_with_hooks(tmp_path, [], post=[f"cat > {log}", "exit 1"])
    outcome = write(engine, root, "src/app.py")
    assert outcome.result.ok and (root / "src/app.py").read_text() == "x"
    payload = json.loads(log.read_text())
    assert payload["tool"] == "write_to_file" and payload["intent"] == "INT-1"
    assert payload["result"]["ok"] is True and payload["workspace"] == str(root.resolve())
    assert outcome.problems == ["post-hook 'exit 1' exited 1"]
