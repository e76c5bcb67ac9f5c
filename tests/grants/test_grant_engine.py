"""Grants in the engine: what a grant answers, and that it never widens any other gate."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from intentd.daemon.engine.engine import Engine, Evaluation
from intentd.daemon.engine.session import Session
from intentd.daemon.grants.model import GrantRefused, derive_grant
from intentd.daemon.testing import make_intent, make_session, make_workspace, write_policy

POLICY: dict[str, Any] = {"auto_approve": {"read": True, "edit": False, "max_consecutive": 0}}


def call(engine: Engine, session: Session, tool: str, **args: Any) -> Evaluation:
    ev = engine.evaluate(session, tool, args)
    engine.apply_dry_run(ev)
    return ev


def verdict(engine: Engine, session: Session, tool: str, **args: Any) -> str:
    return call(engine, session, tool, **args).decision.verdict.value


def grant_from(engine: Engine, session: Session, tool: str, lifetime: str = "workspace",
               shape: str = "command", pattern: str | None = None, **args: Any) -> str:
    """Ask with the call, then remember the person's answer as a grant."""
    ev = call(engine, session, tool, **args)
    assert ev.decision.verdict.value == "ask", ev.decision
    grant = engine.grants.add(derive_grant(ev.ctx, lifetime, shape, pattern, {"by": "test"}))
    return grant.id


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", make_intent(owned_scope=["src/**"]), policy=POLICY,
                          files={"src/a.py": "a\n", "README.md": "r\n"})


@pytest.fixture
def session(engine: Engine, ws: Path) -> Session:
    session = make_session(engine, ws)
    call(engine, session, "select_active_intent", intent_id="INT-1")
    return session


def test_a_command_grant_answers_that_command_and_only_it(engine: Engine,
                                                          session: Session) -> None:
    grant_from(engine, session, "execute_command", command="npm test")
    ev = call(engine, session, "execute_command", command="npm test -- --watch")
    assert ev.decision.verdict.value == "allow" and ev.grant_id is not None
    assert "grant" in ev.decision.reason
    assert verdict(engine, session, "execute_command", command="npm testx") == "ask"
    assert verdict(engine, session, "execute_command", command="npm install") == "ask"
    assert verdict(engine, session, "execute_command", command="npm test; touch src/x") == "ask"
    assert verdict(engine, session, "execute_command", command="sudo npm test") == "ask"


def test_the_prefix_comes_from_the_analysed_commands(engine: Engine, session: Session) -> None:
    ev = call(engine, session, "execute_command", command="make build && git commit -m 'x y'")
    grant = derive_grant(ev.ctx, "session", "command", None, {})
    assert grant.prefixes == (("make", "build"), ("git", "commit"))
    assert grant.policy_rule() is not None and "'git commit *'" in grant.policy_rule()


def test_a_grant_copied_as_a_policy_rule_allows_what_the_grant_allowed(
        engine: Engine, session: Session, ws: Path) -> None:
    grant_id = grant_from(engine, session, "execute_command",
                          command="make build && git commit -m 'x y'")
    grant = engine.grants.revoke(grant_id)
    assert grant is not None and grant.policy_rule() is not None
    write_policy(ws, {**POLICY, **yaml.safe_load(grant.policy_rule())})  # pasted in, as offered
    session.workspace.reload()
    for command in ("git commit -m 'y'", "make build -j4", "make build && git commit"):
        assert verdict(engine, session, "execute_command", command=command) == "allow", command
    for command in ("make install", "git push", "git commit -m y; touch src/x"):
        assert verdict(engine, session, "execute_command", command=command) == "ask", command


def test_revoking_takes_effect_on_the_next_call(engine: Engine, session: Session) -> None:
    grant_id = grant_from(engine, session, "execute_command", command="npm test")
    assert verdict(engine, session, "execute_command", command="npm test") == "allow"
    assert engine.grants.revoke(grant_id) is not None
    assert verdict(engine, session, "execute_command", command="npm test") == "ask"


def test_a_session_grant_ends_with_its_session(engine: Engine, session: Session,
                                               ws: Path) -> None:
    grant_from(engine, session, "execute_command", lifetime="session", command="npm test")
    other = make_session(engine, ws)
    call(engine, other, "select_active_intent", intent_id="INT-1")
    assert verdict(engine, other, "execute_command", command="npm test") == "ask"
    assert verdict(engine, session, "execute_command", command="npm test") == "allow"
    engine.forget_session(session)
    assert engine.grants.listing(str(ws)) == []


def test_workspace_grants_are_private_and_outlive_the_daemon(tmp_path: Path, ws: Path) -> None:
    engine = Engine(tmp_path / "state", checkpoints=False)
    session = make_session(engine, ws)
    call(engine, session, "select_active_intent", intent_id="INT-1")
    grant_from(engine, session, "execute_command", command="npm test")
    files = list((tmp_path / "state").rglob("grants.json"))
    assert len(files) == 1 and stat.S_IMODE(os.stat(files[0]).st_mode) == 0o600
    engine.close()
    again = Engine(tmp_path / "state", checkpoints=False)
    fresh = make_session(again, ws)
    call(again, fresh, "select_active_intent", intent_id="INT-1")
    assert verdict(again, fresh, "execute_command", command="npm test") == "allow"
    again.close()


def test_a_path_grant_covers_its_pattern(engine: Engine, session: Session) -> None:
    grant_from(engine, session, "write_to_file", shape="path", pattern="src/**",
               path="src/b.py", content="b\n")
    assert verdict(engine, session, "write_to_file", path="src/new.py", content="x") == "allow"
    call(engine, session, "read_file", path="src/a.py")
    ev = call(engine, session, "replace_in_file", path="src/a.py", diff="x")
    assert ev.grant_id is None  # another tool


def test_a_pattern_must_cover_the_call_it_came_from(engine: Engine, session: Session) -> None:
    ev = call(engine, session, "write_to_file", path="src/b.py", content="b\n")
    for bad in ("docs/**", "/etc/**", "../**", "!src/a.py", "b.py"):
        with pytest.raises(GrantRefused):
            derive_grant(ev.ctx, "workspace", "path", bad, {})


def test_a_path_is_anchored_at_the_workspace_root(engine: Engine, session: Session,
                                                  ws: Path) -> None:
    write_policy(ws, {**POLICY, "auto_approve": {"read": True, "edit": False}})
    (ws / ".orchestration" / "active_intents.yaml").write_text(
        "active_intents:\n- {id: INT-1, name: all, status: IN_PROGRESS, owned_scope: ['**'],"
        " constraints: [], acceptance_criteria: []}\n")
    session.workspace.reload()
    grant_from(engine, session, "write_to_file", shape="path", path="notes.md", content="n")
    assert verdict(engine, session, "write_to_file", path="notes.md", content="m") == "allow"
    assert verdict(engine, session, "write_to_file", path="src/notes.md", content="m") == "ask"


# -- a grant never widens another gate ------------------------------------------------------

def test_no_grant_opens_the_intent_gate(engine: Engine, session: Session, ws: Path) -> None:
    grant_from(engine, session, "execute_command", command="npm test")
    fresh = make_session(engine, ws)  # no intent selected
    ev = call(engine, fresh, "execute_command", command="npm test")
    assert (ev.decision.verdict.value, ev.decision.stage) == ("deny", "intent_gate")


def test_no_grant_widens_the_scope(engine: Engine, session: Session) -> None:
    grant_from(engine, session, "write_to_file", shape="path", pattern="**",
               path="src/b.py", content="b\n")
    ev = call(engine, session, "write_to_file", path="README.md", content="x")
    assert (ev.decision.verdict.value, ev.decision.stage) == ("deny", "scope")


def test_no_grant_opens_protected_paths(engine: Engine, session: Session, ws: Path) -> None:
    write_policy(ws, POLICY)
    grant_from(engine, session, "write_to_file", shape="path", pattern="**",
               path="src/b.py", content="b\n")
    ev = call(engine, session, "write_to_file", path=".orchestration/active_intents.yaml",
              content="active_intents: []\n")
    assert ev.decision.verdict.value == "deny" and ev.decision.stage == "protected"


def test_no_grant_passes_the_ignore_rules(engine: Engine, session: Session, ws: Path) -> None:
    grant_from(engine, session, "write_to_file", shape="path", pattern="src/**",
               path="src/b.py", content="b\n")
    (ws / ".orchestration" / "ignore").write_text("src/secret.env\n")
    ws_obj = session.workspace
    ws_obj.reload()
    ev = call(engine, session, "write_to_file", path="src/secret.env", content="x")
    assert ev.decision.verdict.value == "deny" and ev.grant_id is None


def test_no_grant_passes_a_deny_rule(engine: Engine, session: Session, ws: Path) -> None:
    grant_from(engine, session, "execute_command", command="npm test")
    write_policy(ws, {**POLICY, "commands": {"deny": ["npm test*"]}})
    session.workspace.reload()
    ev = call(engine, session, "execute_command", command="npm test")
    assert (ev.decision.verdict.value, ev.decision.stage) == ("deny", "command_policy")


def test_no_grant_answers_an_ask_rule(engine: Engine, session: Session, ws: Path) -> None:
    grant_from(engine, session, "execute_command", command="npm test")
    write_policy(ws, {**POLICY, "commands": {"ask": ["npm test*"]}})
    session.workspace.reload()
    ev = call(engine, session, "execute_command", command="npm test")
    assert ev.decision.verdict.value == "ask" and ev.grant_id is None
    with pytest.raises(GrantRefused):
        derive_grant(ev.ctx, "workspace", "command", None, {})


def test_no_grant_answers_the_consecutive_check_in(tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "w2", policy={"auto_approve": {
        "read": True, "edit": True, "max_consecutive": 2}})
    session = make_session(engine, root)
    call(engine, session, "select_active_intent", intent_id="INT-1")
    results = [call(engine, session, "write_to_file", path=f"src/{i}.py", content="x")
               for i in range(3)]
    assert [r.decision.verdict.value for r in results] == ["allow", "allow", "ask"]
    with pytest.raises(GrantRefused):
        derive_grant(results[2].ctx, "workspace", "path", "src/**", {})


def test_a_grant_made_before_does_not_answer_the_check_in(engine: Engine, session: Session,
                                                          ws: Path) -> None:
    grant_from(engine, session, "write_to_file", shape="path", pattern="src/**",
               path="src/first.py", content="x")  # asked: edits are not auto-approved yet
    write_policy(ws, {"auto_approve": {"read": True, "edit": True, "max_consecutive": 2}})
    session.workspace.reload()  # as the daemon's watcher does
    results = [call(engine, session, "write_to_file", path=f"src/{i}.py", content="x")
               for i in range(3)]
    assert [r.decision.verdict.value for r in results] == ["allow", "allow", "ask"]
    assert results[2].grant_id is None and "checks in" in results[2].decision.reason
