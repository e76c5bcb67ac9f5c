"""A command the policy proves read-only is audited too when no kernel holds it to that: a
hook-based agent runs its own commands unconfined, and without Landlock intentd's own run
unconfined. Commands run here under Landlock stay as they are: no write right, no checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.sandbox.landlock import FORCE_ABI_ENV, kernel_abi
from tests.sandbox.conftest import (
    Connect,
    daemon_with,
    git_workspace,
    ledger_entries,
    path_with,
    two_agents,
    unasked_command,
)
from tests.server.helpers import open_session

READ = "cat src/app.py"  # what the agent's command looks like to the policy: read-only


def authorize_read(agent: Client, session_id: str) -> dict[str, Any]:
    grant: dict[str, Any] = agent.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session_id, "tool": "execute_command", "args": {"command": READ}})
    assert grant["decision"] == "allow" and grant["approved_by"] == "auto", grant
    assert grant["checkpoint_id"], "a hook agent's read is not confined: it needs a checkpoint"
    return grant


def report(agent: Client, session_id: str, grant: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = agent.call(protocol.TOOLS_REPORT, {
        "session_id": session_id, "call_id": grant["call_id"], "ok": True, "output": "hi"})
    return dict(answer.get("scope_audit") or {})  # none when all it changed was in scope


def checkpoint_ids(client: Client, workspace: Path) -> list[str]:
    listed = client.call(protocol.CHECKPOINTS_LIST, {"workspace": str(workspace)})
    return [c["id"] for c in listed["checkpoints"]]


def test_a_hook_agents_read_that_writes_outside_the_scope_is_undone(connect: Connect,
                                                                    tmp_path: Path) -> None:
    """The policy saw `cat`; what ran (a shadowing cat, an alias) wrote: undone and named."""
    workspace = git_workspace(tmp_path / "ws", ["src/**"])
    agent = connect("claude-code")
    session_id = open_session(agent, workspace)
    grant = authorize_read(agent, session_id)
    (workspace / "src" / "notes.txt").write_text("in scope: kept\n")
    (workspace / "docs" / "stray.md").write_text("written by the 'read'\n")
    (workspace / "README.md").write_text("# overwritten by the 'read'\n")
    audit = report(agent, session_id, grant)
    assert sorted(audit["undone"]) == ["README.md", "docs/stray.md"]
    assert "undone: docs/stray.md (created; removed" in audit["message"]
    assert "undone: README.md (modified; brought back" in audit["message"]
    assert not (workspace / "docs" / "stray.md").exists()
    assert (workspace / "README.md").read_text() == "# demo\n"
    assert (workspace / "src" / "notes.txt").read_text() == "in scope: kept\n"
    entry = ledger_entries(connect("cli"), workspace)[-1]
    assert entry["receipt"]["checkpoint_id"] == grant["checkpoint_id"]
    assert sorted(entry["receipt"]["data"]["scope_audit"]["undone"]) == sorted(audit["undone"])


def test_a_persons_edit_before_the_read_is_kept(connect: Connect, tmp_path: Path) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**"])
    agent = connect("claude-code")
    session_id = open_session(agent, workspace)
    first = authorize_read(agent, session_id)
    assert report(agent, session_id, first) == {}, "a read that wrote nothing: nothing to say"
    (workspace / "docs" / "guide.md").write_text("# the person's own edit\n")  # outside scope
    grant = authorize_read(agent, session_id)
    assert grant["checkpoint_id"] != first["checkpoint_id"], "the edit is recorded before it"
    (workspace / "docs" / "stray.md").write_text("written by the 'read'\n")
    audit = report(agent, session_id, grant)
    assert audit["undone"] == ["docs/stray.md"]
    assert (workspace / "docs" / "guide.md").read_text() == "# the person's own edit\n"


def test_reads_with_nothing_changed_add_no_checkpoint(connect: Connect, tmp_path: Path) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**"])
    agent = connect("claude-code")
    session_id = open_session(agent, workspace)
    grants = [authorize_read(agent, session_id) for _ in range(3)]
    for grant in grants:
        assert report(agent, session_id, grant) == {}
    assert len({g["checkpoint_id"] for g in grants}) == 1, "the latest checkpoint serves them all"
    assert len(checkpoint_ids(agent, workspace)) <= 1


@pytest.mark.parametrize("mode", ["restore", "report"])
def test_with_no_intent_selected_nothing_is_in_scope(connect: Connect, tmp_path: Path,
                                                     mode: str) -> None:
    """A read needs no intent; what it writes, even where an intent would own, is held to none."""
    workspace = git_workspace(tmp_path / "ws", ["src/**"], {"scope_audit": mode})
    agent = connect("claude-code")
    session_id = open_session(agent, workspace, select=False)
    grant = authorize_read(agent, session_id)
    (workspace / "src" / "made.py").write_text("written by the 'read'\n")
    audit = report(agent, session_id, grant)
    assert audit["mode"] == mode and audit["intent_id"] is None
    assert audit["out_of_scope"] == [["src/made.py", "added"]]
    assert "outside any intent's scope" in audit["message"]
    if mode == "restore":
        assert audit["undone"] == ["src/made.py"] and not (workspace / "src" / "made.py").exists()
    else:
        assert audit["undone"] == [] and (workspace / "src" / "made.py").exists()
        assert "left in place (scope_audit: report): src/made.py" in audit["message"]


def test_with_the_audit_off_a_read_takes_no_checkpoint(connect: Connect, tmp_path: Path) -> None:
    """`scope_audit: off`: no audit follows a read, so no checkpoint is taken for one."""
    workspace = git_workspace(tmp_path / "ws", ["src/**"], {"scope_audit": "off"})
    agent = connect("claude-code")
    session_id = open_session(agent, workspace)
    grant = agent.call(protocol.TOOLS_AUTHORIZE, {
        "session_id": session_id, "tool": "execute_command", "args": {"command": READ}})
    assert grant["decision"] == "allow" and grant["checkpoint_id"] is None
    (workspace / "docs" / "stray.md").write_text("left: the person turned the audit off\n")
    assert report(agent, session_id, grant) == {}
    assert (workspace / "docs" / "stray.md").exists()


def test_a_read_alongside_anothers_command_undoes_none_of_its_work(connect: Connect,
                                                                  tmp_path: Path) -> None:
    """What the other agent's `make` wrote lies outside the reader's scope, and the read's
    diff cannot tell whose it is: reported, not undone."""
    workspace, first, one, second, two = two_agents(connect, tmp_path)
    read = authorize_read(first, one)
    make = second.call(protocol.TOOLS_AUTHORIZE, {"session_id": two, "tool": "execute_command",
                                                  "args": {"command": "make"}})
    (workspace / "docs" / "theirs.md").write_text("the second agent's work\n")
    assert report(second, two, make) == {}
    audit = report(first, one, read)
    assert audit["mode"] == "report" and audit["undone"] == []
    assert (workspace / "docs" / "theirs.md").exists()


def test_a_read_alongside_does_not_spare_a_commands_stray_write(connect: Connect,
                                                               tmp_path: Path) -> None:
    """A read is no writer: a `make` that ran beside one still has its stray write undone."""
    workspace, first, one, second, two = two_agents(connect, tmp_path)
    make = first.call(protocol.TOOLS_AUTHORIZE, {"session_id": one, "tool": "execute_command",
                                                 "args": {"command": "make"}})
    read = authorize_read(second, two)
    (workspace / "README.md").write_text("written by make, in nobody's scope\n")
    assert report(second, two, read)["mode"] == "report", "the read cannot tell whose it is"
    audit = report(first, one, make)
    assert audit["mode"] == "restore" and audit["undone"] == ["README.md"]
    assert not (workspace / "README.md").exists()


@pytest.mark.skipif(kernel_abi() < 1, reason="needs a kernel with Landlock")
def test_a_read_run_here_under_landlock_takes_no_checkpoint(connect: Connect,
                                                            tmp_path: Path) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**"])
    answer = unasked_command(connect, workspace, READ)
    assert answer["result"]["data"]["sandbox"]["confined"] is True
    assert answer["checkpoint_id"] is None and "scope_audit" not in answer["result"]["data"]
    assert checkpoint_ids(connect("cli"), workspace) == []


# A `cat` earlier on PATH than the system's: what the policy reads as `cat` writes.
SHADOW_CAT = "#!/bin/sh\necho sneaky > docs/notes.txt\nexec /bin/cat \"$@\"\n"


@pytest.fixture
def unconfined(short_dir: Path) -> Iterator[Connect]:
    """A daemon without Landlock whose PATH starts with the shadowing `cat`."""
    env = {"PATH": path_with(short_dir, "cat", SHADOW_CAT), FORCE_ABI_ENV: "0"}
    with daemon_with(short_dir, env) as make:
        yield make


def test_without_landlock_a_read_run_here_is_audited(unconfined: Connect, tmp_path: Path) -> None:
    workspace = git_workspace(tmp_path / "ws", ["src/**"])
    answer = unasked_command(unconfined, workspace, READ)
    result = answer["result"]
    assert "print('hi')" in result["output"] and result["data"]["sandbox"]["confined"] is False
    assert answer["checkpoint_id"], "unconfined: the audit needs the checkpoint before it"
    assert result["data"]["scope_audit"]["undone"] == ["docs/notes.txt"]
    assert not (workspace / "docs" / "notes.txt").exists()
