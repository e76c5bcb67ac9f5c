"""A command's receipt says how its checkpoint found changes: by the watcher, or a scan and why."""

from __future__ import annotations

import json
from pathlib import Path

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import decide, make_intent, make_session, make_workspace
from intentd.daemon.utils.statedir import workspace_state_dir


def receipts(engine: Engine, root: Path) -> list[dict[str, object]]:
    ledger = workspace_state_dir(root.resolve(), engine.home) / "ledger.jsonl"
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    return [e["receipt"] for e in entries if e.get("phase") != "intent"]  # receipts, not intents


def test_the_receipt_of_a_command_names_its_checkpoints_coverage(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]),
                          policy={"auto_approve": {"all_commands": True, "max_consecutive": 0}},
                          files={"src/app.py": "x = 1\n"})
    engine = Engine(tmp_path / "state")
    try:
        session = make_session(engine, root)
        engine.run(decide(engine, session, "select_active_intent", intent_id="INT-1"), "auto")
        for _ in range(2):
            ev = decide(engine, session, "execute_command", command="touch src/new.py")
            assert engine.run(ev, "auto").checkpoint_id
    finally:
        engine.close()
    first, second = [r for r in receipts(engine, root) if r["checkpoint_id"]]
    assert first["checkpoint_coverage"] == "full scan: the first checkpoint of this workspace"
    assert second["checkpoint_coverage"] == ""  # the watcher saw everything since the first
