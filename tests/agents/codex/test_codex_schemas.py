"""The payloads and answers against Codex's own hook schemas (fixtures/schemas/).

Codex CLI carries a JSON schema for each hook's input and output
(codex-rs/hooks/schema/generated); the ones here were taken out of the pinned 0.169.0 program.
Every fixture must be an input Codex could send, and every answer the adapter gives one Codex
reads: an answer it cannot read is a failed hook, and for PreToolUse that lets the call run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from intentd.daemon.agents.hooks.adapter import HookEvent
from intentd.daemon.agents.hooks.codex import ADAPTER
from tests.agents.clis import CODEX, installed

SCHEMAS = Path(__file__).parent / "fixtures" / "schemas"
FIXTURES = Path(__file__).parent / "fixtures"
INPUTS = {"PreToolUse": "pre-tool-use", "PostToolUse": "post-tool-use",
          "PermissionRequest": "permission-request", "SessionStart": "session-start",
          "SessionEnd": "session-end"}
_EMBEDDED = re.compile(rb'\{\n  "\$schema": "http://json-schema.org/draft-07/schema#",.*?\n\}', re.S)


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return loaded


def event(name: str, kind: str) -> HookEvent:
    return HookEvent(kind=kind, name=name, session_key="s")  # type: ignore[arg-type]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_fixture_is_an_input_codex_sends(path: Path) -> None:
    payload = json.loads(path.read_text())
    jsonschema.validate(payload, schema(f"{INPUTS[payload['hook_event_name']]}.command.input"))


def answers() -> list[tuple[str, str]]:
    pre, post = event("PreToolUse", "pre_tool"), event("PostToolUse", "post_tool")
    start, asked = event("SessionStart", "session_start"), event("PermissionRequest", "other")
    replies = [
        ("pre-tool-use", ADAPTER.deny(pre, "intentd (scope): docs/x.md is outside").stdout),
        ("pre-tool-use", ADAPTER.ask(pre, "intentd: a person must approve").stdout),
        ("pre-tool-use", ADAPTER.allow(pre, "ok", context="<intent_context>…").stdout),
        ("post-tool-use", ADAPTER.reported(post, "src/x.py was undone").stdout),
        ("session-start", ADAPTER.context(start, "intentd gates this workspace").stdout),
        ("permission-request", ADAPTER.deny(asked, "intentd refused it").stdout),
    ]
    return [(name, text) for name, text in replies if text]


@pytest.mark.parametrize("name, text", answers())
def test_every_answer_is_one_codex_reads(name: str, text: str) -> None:
    jsonschema.validate(json.loads(text), schema(f"{name}.command.output"))


def test_a_refusal_uses_the_documented_deny_and_an_allow_says_nothing() -> None:
    pre = event("PreToolUse", "pre_tool")
    deny = json.loads(ADAPTER.deny(pre, "why").stdout)["hookSpecificOutput"]
    assert deny == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                    "permissionDecisionReason": "why"}
    assert ADAPTER.ask(pre, "why") == ADAPTER.deny(pre, "why")  # "ask" would let it run
    assert ADAPTER.allow(pre, "ok").stdout == ""  # "allow" alone is a failed hook in Codex
    unreadable = ADAPTER.deny(None, "the hook input is not JSON")
    assert unreadable.exit_code == 2 and unreadable.stderr.strip()


def test_the_stored_schemas_are_those_of_the_pinned_codex() -> None:
    """Raising the pin without taking its schemas again fails here."""
    program = installed(CODEX).resolve()
    binaries = list(program.parents[2].glob("codex-*/vendor/*/bin/codex*")) or [program]
    data = b"".join(path.read_bytes() for path in binaries)
    embedded = {json.loads(m.group(0)).get("title"): json.loads(m.group(0))
                for m in _EMBEDDED.finditer(data)}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        title = path.name.removesuffix(".schema.json")
        assert embedded.get(title) == json.loads(path.read_text()), title
