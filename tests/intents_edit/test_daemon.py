"""The edits through a real daemon: conflicts, atomic writes, the live reload, and a refusal at
`scope` that a person turns into a scope line, after which the agent's next try passes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError
from intentd.daemon.testing import DaemonProcess
from tests.intents_edit.conftest import HAND_WRITTEN, intents_file


def read(person: Client, ws: Path) -> str:
    return str(person.call(protocol.INTENTS_READ, {"workspace": str(ws)})["sha256"])


def test_an_edit_based_on_an_older_file_is_refused_and_the_hand_edit_survives(
        person: Client, ws: Path) -> None:
    base = read(person, ws)
    hand = HAND_WRITTEN.replace("status: PENDING", "status: IN_PROGRESS  # saved by hand")
    intents_file(ws).write_text(hand)
    with pytest.raises(RpcError) as refused:
        person.call(protocol.INTENTS_SCOPE_ADD, {"workspace": str(ws), "base_sha256": base,
                                                 "intent_id": "AUTH", "globs": ["lib/**"]})
    assert refused.value.code == protocol.INTENTS_CONFLICT
    assert "changed since this edit was prepared" in refused.value.message
    assert intents_file(ws).read_text() == hand
    assert refused.value.data["sha256"] == read(person, ws)


def test_an_edit_replaces_the_file_whole_and_leaves_no_temp_file(person: Client, ws: Path) -> None:
    path = intents_file(ws)
    os.chmod(path, 0o640)
    inode = path.stat().st_ino
    answer = person.call(protocol.INTENTS_UPDATE_STATUS, {
        "workspace": str(ws), "base_sha256": read(person, ws), "intent_id": "DOCS",
        "status": "IN_PROGRESS"})
    assert answer["changed"] and answer["sha256"] == read(person, ws)
    assert path.stat().st_ino != inode, "written through a temp file renamed over the old one"
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["active_intents.yaml", "policy.yaml"]
    listed = person.call(protocol.INTENTS_LIST, {"workspace": str(ws)})["intents"]
    assert [i["selectable"] for i in listed] == [True, True]


def test_an_invalid_edit_is_refused_with_the_loaders_file_and_line(
        person: Client, ws: Path) -> None:
    with pytest.raises(RpcError) as refused:
        person.call(protocol.INTENTS_CREATE, {
            "workspace": str(ws), "base_sha256": read(person, ws),
            "intent": {"id": "DOCS", "name": "twice", "status": "PENDING"}})
    assert refused.value.code == protocol.INTENTS_INVALID
    assert refused.value.data["line"] == 28 and refused.value.data["file"] == str(intents_file(ws))
    assert "duplicate intent id 'DOCS' (first at line 20)" in refused.value.message
    assert intents_file(ws).read_text() == HAND_WRITTEN


def call_write(person: Client, session: str, path: str) -> dict[str, object]:
    answer: dict[str, object] = person.call(protocol.TOOLS_CALL, {
        "session_id": session, "tool": "write_to_file", "args": {"path": path, "content": "n"}})
    return answer


def test_a_refusal_at_scope_becomes_a_scope_line_and_the_next_try_passes(
        daemon: DaemonProcess, person: Client, ws: Path) -> None:
    session = person.call(protocol.SESSIONS_OPEN, {"workspace": str(ws)})["session_id"]
    person.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "AUTH"})
    refused = call_write(person, session, "docs/new.md")
    assert (refused["decision"], refused["stage"]) == ("deny", "scope")
    with Client(daemon.socket_path, timeout=30) as other:  # another agent, its own session
        other.initialize("another-agent")
        second = other.call(protocol.SESSIONS_OPEN, {"workspace": str(ws)})["session_id"]
        other.call(protocol.INTENTS_SELECT, {"session_id": second, "intent_id": "AUTH"})
        assert call_write(other, second, "docs/other.md")["stage"] == "scope"
        preview = person.call(protocol.INTENTS_PREVIEW_SCOPE, {
            "workspace": str(ws), "intent_id": "AUTH",
            "owned_scope": ["src/auth/**", "tests/auth/**", "docs/auth.md", "docs/**"]})
        assert preview["added"] == ["docs/guide.md"] and preview["removed"] == []
        person.call(protocol.INTENTS_SCOPE_ADD, {"workspace": str(ws),
                                                 "base_sha256": read(person, ws),
                                                 "intent_id": "AUTH", "globs": ["docs/**"]})
        passed = call_write(person, session, "docs/new.md")
        assert (passed["decision"], passed["approved_by"]) == ("allow", "auto")
        # The live reload reaches every session, not only the one whose refusal led to it.
        assert call_write(other, second, "docs/other.md")["decision"] == "allow"
    assert (ws / "docs/new.md").read_text() == "n" and (ws / "docs/other.md").read_text() == "n"


def test_the_preview_applies_exclusions_and_says_what_a_change_removes(
        person: Client, ws: Path) -> None:
    preview = person.call(protocol.INTENTS_PREVIEW_SCOPE, {
        "workspace": str(ws), "intent_id": "AUTH",
        "owned_scope": ["src/**", "!src/auth/secret/**", "!"]})
    assert (preview["count"], preview["files"]) == (1, ["src/auth/login.py"])
    assert preview["removed"] == ["docs/auth.md", "src/auth/secret/key.py"]
    assert preview["problems"][0]["line"] == 3


def test_the_preview_says_whether_a_path_not_made_yet_is_owned(person: Client, ws: Path) -> None:
    preview = person.call(protocol.INTENTS_PREVIEW_SCOPE, {
        "workspace": str(ws), "intent_id": "AUTH", "paths": ["docs/new.md", "src/auth/n.py"],
        "owned_scope": ["src/auth/**", "docs/new.md"]})
    assert preview["owns"] == {"docs/new.md": {"before": False, "after": True},
                               "src/auth/n.py": {"before": True, "after": True}}
    assert preview["added_count"] == 0  # no such file yet
