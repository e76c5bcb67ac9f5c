"""Auto-approval per action class: what the policy lets run without asking a person."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import decide, make_intent, make_session, make_workspace


def session_with(tmp_path: Path, engine: Engine, auto: dict[str, Any],
                 commands: dict[str, Any] | None = None) -> Any:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]),
                          policy={"auto_approve": auto, "commands": commands or {}},
                          files={"a.txt": "a"})
    (tmp_path / "outside.txt").write_text("o")
    session = make_session(engine, root)
    decide(engine, session, "select_active_intent", intent_id="INT-1")
    return session


def verdict(engine: Engine, session: Any, tool: str, **args: Any) -> str:
    return decide(engine, session, tool, **args).decision.verdict.value


@pytest.mark.parametrize(("auto", "tool", "args", "expected"), [
    ({}, "read_file", {"path": "a.txt"}, "allow"),
    ({"read": False}, "read_file", {"path": "a.txt"}, "ask"),
    ({}, "read_file", {"path": "../outside.txt"}, "ask"),
    ({"read_external": True}, "read_file", {"path": "../outside.txt"}, "allow"),
    ({}, "write_to_file", {"path": "new.txt", "content": ""}, "ask"),
    ({"edit": True}, "write_to_file", {"path": "new.txt", "content": ""}, "allow"),
    ({}, "execute_command", {"command": "ls -la"}, "allow"),
    ({"safe_commands": False}, "execute_command", {"command": "ls -la"}, "ask"),
    ({}, "execute_command", {"command": "make build"}, "ask"),
    ({"all_commands": True}, "execute_command", {"command": "make build"}, "allow"),
    ({"all_commands": True}, "execute_command", {"command": "[[ -f x ]] && make"}, "ask"),
    ({"all_commands": True}, "execute_command", {"command": "eval make"}, "ask"),
    ({}, "mcp__github__create_issue", {"title": "x"}, "ask"),
    ({"mcp": True}, "mcp__github__create_issue", {"title": "x"}, "allow"),
])
def test_each_action_class_follows_its_setting(tmp_path: Path, engine: Engine, auto: dict[str, Any],
                                               tool: str, args: dict[str, Any], expected: str) -> None:
    session = session_with(tmp_path, engine, auto)
    assert verdict(engine, session, tool, **args) == expected


def test_allow_ask_and_deny_rules(tmp_path: Path, engine: Engine) -> None:
    session = session_with(tmp_path, engine, {}, commands={
        "allow": ["npm test", "npm run *"], "ask": ["git push *"], "deny": ["curl *"]})
    assert verdict(engine, session, "execute_command", command="npm run lint") == "allow"
    assert verdict(engine, session, "execute_command", command="git push origin main") == "ask"
    assert verdict(engine, session, "execute_command", command="npm test && curl x") == "deny"


def test_default_deny_refuses_unmatched_and_unparseable(tmp_path: Path, engine: Engine) -> None:
    session = session_with(tmp_path, engine, {}, commands={"default": "deny"})
    assert verdict(engine, session, "execute_command", command="make build") == "deny"
    assert verdict(engine, session, "execute_command", command="[[ -f x ]] && ls") == "deny"
    assert verdict(engine, session, "execute_command", command="ls") == "allow"


def test_mcp_tools_still_need_an_intent(tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", policy={"auto_approve": {"mcp": True}})
    session = make_session(engine, root)
    ev = decide(engine, session, "mcp__github__create_issue", title="x")
    assert ev.decision.stage == "intent_gate"
