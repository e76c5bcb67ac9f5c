"""What a scope refusal tells the agent: deleting a folder whose contents are in scope."""

from __future__ import annotations

from pathlib import Path

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import decide, make_intent, make_session, make_workspace


def test_rm_rf_of_the_scoped_folder_says_the_folder_itself_is_outside(tmp_path: Path,
                                                                      engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", make_intent("INT-1", owned_scope=["src/**"]))
    session = make_session(engine, root)
    assert session.intent_id is None
    decide(engine, session, "select_active_intent", intent_id="INT-1")
    assert session.intent_id == "INT-1"
    decision = decide(engine, session, "execute_command", command="rm -rf src").decision
    assert (decision.verdict.value, decision.stage) == ("deny", "scope")
    assert "not the folder src itself" in decision.reason
    assert "its contents are not" in decision.reason
    other = decide(engine, session, "execute_command", command="rm -rf docs").decision
    assert other.stage == "scope" and "itself" not in other.reason  # not a folder it works in
    inside = decide(engine, session, "write_to_file", path="src/new.py", content="x").decision
    assert inside.stage == "approval"
