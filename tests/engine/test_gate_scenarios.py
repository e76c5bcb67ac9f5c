"""Whole sessions through the decision pipeline: the intent handshake, scope, protected and stale files."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.calls import RECHECK_AFTER
from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.session import Mode
from intentd.daemon.testing import decide, make_intent, make_session, make_workspace, write_intents


def verdict(engine: Engine, session: Any, tool: str, **args: Any) -> tuple[str, str, str]:
    d = decide(engine, session, tool, **args).decision
    return d.verdict.value, d.stage, d.reason


def test_write_before_selecting_an_intent_is_refused_with_the_fix(engine: Engine,
                                                                  workspace: Path) -> None:
    session = make_session(engine, workspace)
    decision, stage, reason = verdict(engine, session, "write_to_file", path="src/new.py", content="x")
    assert (decision, stage) == ("deny", "intent_gate")
    assert reason.startswith("You must cite a valid active Intent ID.")
    assert "select_active_intent with one of: INT-1" in reason


def test_handshake_then_scoped_write_needs_a_person_and_out_of_scope_is_refused(
        engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace)
    assert verdict(engine, session, "select_active_intent", intent_id="INT-1")[0] == "allow"
    assert session.intent_id == "INT-1"
    assert verdict(engine, session, "write_to_file", path="src/new.py", content="x")[:2] == (
        "ask", "approval")
    decision, stage, reason = verdict(engine, session, "write_to_file", path="docs/x.md", content="x")
    assert (decision, stage) == ("deny", "scope")
    assert "INT-1" in reason and "docs/x.md" in reason and "scope expansion" in reason


def test_selecting_an_unknown_or_closed_intent_is_refused(tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", make_intent("OPEN"), make_intent("DONE", status="DONE"))
    session = make_session(engine, root)
    decision, stage, reason = verdict(engine, session, "select_active_intent", intent_id="NOPE")
    assert (decision, stage) == ("deny", "intent_gate") and "one of: OPEN" in reason
    decision, _, reason = verdict(engine, session, "select_active_intent", intent_id="DONE")
    assert decision == "deny" and "status DONE" in reason
    assert session.intent_id is None


def test_selectable_statuses_come_from_the_policy(tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", make_intent("R", status="REVIEW"),
                          policy={"intents": {"selectable_statuses": ["REVIEW"]}})
    session = make_session(engine, root)
    assert verdict(engine, session, "select_active_intent", intent_id="R")[0] == "allow"


def test_intent_closed_while_selected_fails_the_next_destructive_call(
        tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws")
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    write_intents(root, make_intent("INT-1", status="COMPLETED"), make_intent("INT-2"))
    session.workspace.reload()
    decision, stage, reason = verdict(engine, session, "write_to_file", path="src/a.py", content="")
    assert (decision, stage) == ("deny", "intent_gate")
    assert "COMPLETED" in reason and "one of: INT-2" in reason
    write_intents(root, make_intent("INT-2"))
    session.workspace.reload()
    assert "not listed" in verdict(engine, session, "write_to_file", path="src/a.py", content="")[2]


def test_reads_are_never_gated_by_intent(engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace)
    assert verdict(engine, session, "read_file", path="README.md")[:2] == ("allow", "approval")
    assert verdict(engine, session, "list_files", recursive=True)[0] == "allow"
    assert verdict(engine, session, "ask_followup_question", question="why?")[0] == "allow"


@pytest.mark.parametrize("path", [".orchestration/active_intents.yaml", ".orchestration/new.yaml",
                                  ".git/config", "src/vendor/.git/HEAD",
                                  # a `!` line there re-included what .orchestration/ignore hides
                                  ".clineignore", ".rooignore", ".ClineIgnore",
                                  # a package that is a workspace of its own: its intents, policy
                                  "packages/api/.orchestration/active_intents.yaml",
                                  "packages/api/.orchestration/policy.yaml",
                                  "packages/api/.rooignore"])
def test_protected_paths_are_refused_whatever_the_scope(tmp_path: Path, engine: Engine,
                                                        path: str) -> None:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]))
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    decision, stage, _ = verdict(engine, session, "write_to_file", path=path, content="x")
    assert (decision, stage) == ("deny", "protected")


def test_scope_resolves_dotdot_and_symlinks(tmp_path: Path, engine: Engine) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["src/**"]),
                          files={"src/ok.py": ""})
    os.symlink(outside, root / "src" / "escape")
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    assert verdict(engine, session, "write_to_file", path="src/../docs/x", content="")[1] == "scope"
    decision, stage, reason = verdict(engine, session, "write_to_file", path="src/escape/x",
                                      content="")
    assert (decision, stage) == ("deny", "scope") and "outside the workspace" in reason
    assert verdict(engine, session, "write_to_file", path="docs/../src/y.py", content="")[0] == "ask"


def test_dotdot_after_a_symlink_is_refused(tmp_path: Path, engine: Engine) -> None:
    """The kernel reads src/d/../../x from d's target (src/a/b, so src/a/x: in scope); a hook
    agent that drops `..` as text first (Node's path.resolve) writes ./x, here the person's
    intents. A path two programs read two ways is refused; one without a symlink is not."""
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["src/**"]),
                          files={"src/a/b/keep.py": ""})
    os.symlink("a/b", root / "src" / "d")
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    for path in ("src/d/../../.orchestration/active_intents.yaml", "src/d/../../README.md",
                 f"{root}/src/d/../../README.md"):
        decision, stage, reason = verdict(engine, session, "write_to_file", path=path, content="")
        assert (decision, stage) == ("deny", "validate") and "'..' after a symlink" in reason
    assert verdict(engine, session, "read_file", path="src/d/../../README.md")[1] == "validate"
    assert verdict(engine, session, "write_to_file", path="src/a/../a/b/new.py",
                   content="")[0] == "ask"
    assert verdict(engine, session, "write_to_file", path="src/d/new.py", content="")[0] == "ask"


def test_scope_negation_and_empty_scope(tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", make_intent("A", owned_scope=["src/**", "!src/gen/**"]),
                          make_intent("B", owned_scope=[]))
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="A")
    assert verdict(engine, session, "write_to_file", path="src/a.py", content="")[0] == "ask"
    assert verdict(engine, session, "write_to_file", path="src/gen/a.py", content="")[1] == "scope"
    verdict(engine, session, "select_active_intent", intent_id="B")
    decision, stage, reason = verdict(engine, session, "write_to_file", path="src/a.py", content="")
    assert (decision, stage) == ("deny", "scope") and "empty owned_scope" in reason


def test_plan_mode_refuses_writes_and_allows_reads(engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace, mode=Mode.PLAN)
    assert verdict(engine, session, "write_to_file", path="src/a.py", content="")[:2] == (
        "deny", "mode")
    assert verdict(engine, session, "execute_command", command="touch x")[:2] == ("deny", "mode")
    assert verdict(engine, session, "execute_command", command="ls -la")[0] == "allow"
    assert verdict(engine, session, "read_file", path="src/app.py")[0] == "allow"


def test_stale_file_rules(engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    decision, stage, reason = verdict(engine, session, "write_to_file", path="src/app.py", content="")
    assert (decision, stage) == ("deny", "stale_file") and "read it again" in reason
    assert verdict(engine, session, "read_file", path="src/app.py")[0] == "allow"
    assert verdict(engine, session, "replace_in_file", path="src/app.py", old_str="hi",
                   new_str="ho")[0] == "ask"
    (workspace / "src" / "app.py").write_text("changed by the person\n")
    decision, stage, reason = verdict(engine, session, "replace_in_file", path="src/app.py",
                                      old_str="x", new_str="y")
    assert (decision, stage) == ("deny", "stale_file") and "changed on disk" in reason
    assert "does not exist" in verdict(engine, session, "replace_in_file", path="src/none.py",
                                       old_str="a", new_str="b")[2]


def test_ignored_paths_are_refused_for_reads_and_writes(tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]),
                          files={".orchestration/ignore": "secrets/\n*.pem\n",
                                 ".clineignore": "private.txt\n", "secrets/k": "s", "a.pem": "k"})
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    for tool, args in [("read_file", {"path": "secrets/k"}), ("read_file", {"path": "a.pem"}),
                       ("read_file", {"path": "./x/../private.txt"}),
                       ("write_to_file", {"path": "secrets/new", "content": ""}),
                       ("list_files", {"path": "secrets"})]:
        assert verdict(engine, session, tool, **args)[:2] == ("deny", "access"), (tool, args)


def test_external_reads_need_a_person_by_default(tmp_path: Path, engine: Engine,
                                                 workspace: Path) -> None:
    (tmp_path / "elsewhere.txt").write_text("x")
    session = make_session(engine, workspace)
    decision, stage, reason = verdict(engine, session, "read_file", path="../elsewhere.txt")
    assert (decision, stage) == ("ask", "approval") and "outside the workspace" in reason


def test_commands_naming_ignored_or_outside_paths_need_a_person(tmp_path: Path,
                                                                engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", files={".orchestration/ignore": ".env\nsecrets/\n",
                                                  ".env": "KEY=1", "src/a.py": ""})
    session = make_session(engine, root)
    for command in ["cat .env", "head -n 1 secrets/x", "cat ../../etc/passwd", "cat /etc/hosts",
                    "cat .e*", "grep -r KEY .", "rg KEY", "ls -R", "find . -name '*.env'",
                    "git grep KEY", "git show HEAD:.env"]:
        decision, stage, reason = verdict(engine, session, "execute_command", command=command)
        assert (decision, stage) == ("ask", "approval"), (command, reason)
    assert verdict(engine, session, "execute_command", command="cat src/a.py")[0] == "allow"
    assert verdict(engine, session, "execute_command", command="ls src")[0] == "allow"


def test_what_changed_while_a_person_decided_is_checked_again(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "state", checkpoints=False)
    root = make_workspace(tmp_path / "ws", files={"src/a.py": "one\n"})
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    verdict(engine, session, "read_file", path="src/a.py")
    waiting = engine.evaluate(session, "write_to_file", {"path": "src/a.py", "content": "agent\n"})
    assert waiting.decision.verdict.value == "ask"
    (root / "src" / "a.py").write_text("the person's edit\n")  # while the approval waits
    outcome = engine.run(waiting, approved_by="person")
    assert (outcome.decision.verdict.value, outcome.decision.stage) == ("deny", "stale_file")
    assert (root / "src" / "a.py").read_text() == "the person's edit\n"

    waiting = engine.evaluate(session, "write_to_file", {"path": "src/b.py", "content": "b\n"})
    write_intents(root, make_intent("INT-1", status="DONE"))
    session.workspace.reload()
    outcome = engine.run(waiting, approved_by="person")
    assert outcome.decision.stage == "intent_gate" and not (root / "src" / "b.py").exists()
    engine.close()


def test_an_allowed_call_that_waited_to_run_is_checked_again(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "state", checkpoints=False)
    root = make_workspace(tmp_path / "ws", policy={"auto_approve": {"edit": True}})
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    allowed = engine.evaluate(session, "write_to_file", {"path": "src/b.py", "content": "b\n"})
    assert allowed.decision.allowed  # no person asked: it waits only for a thread to run it
    write_intents(root, make_intent("INT-1", status="DONE"))
    session.workspace.reload()
    time.sleep(RECHECK_AFTER * 2)
    outcome = engine.run(allowed, approved_by="auto")
    assert outcome.decision.stage == "intent_gate" and not (root / "src" / "b.py").exists()
    engine.close()


def test_a_symlink_swapped_in_while_waiting_is_caught(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "state", checkpoints=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    root = make_workspace(tmp_path / "ws", files={"src/sub/keep.txt": ""})
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    waiting = engine.evaluate(session, "write_to_file", {"path": "src/sub/x.py", "content": "x"})
    assert waiting.decision.verdict.value == "ask"
    (root / "src" / "sub" / "keep.txt").unlink()
    (root / "src" / "sub").rmdir()
    os.symlink(outside, root / "src" / "sub")
    outcome = engine.run(waiting, approved_by="person")
    assert outcome.decision.stage == "scope" and not (outside / "x.py").exists()
    engine.close()


def test_a_hook_agents_edit_is_refused_when_its_file_cannot_be_looked_at(
        tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hard-link check (how many names the file has) must see the file: an error there
    other than "not there" refuses the edit the agent would make itself."""
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]))
    session = make_session(engine, root)
    verdict(engine, session, "select_active_intent", intent_id="INT-1")
    ev = engine.evaluate(session, "write_to_file", {"path": "src/new.py", "content": "x"})

    def denied(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("intentd.daemon.engine.steps.os.lstat", denied)
    outcome = engine.authorize(ev, approved_by="test")
    assert (outcome.decision.verdict.value, outcome.decision.stage) == ("deny", "access")
    assert "cannot be looked at (Permission denied)" in outcome.decision.reason
