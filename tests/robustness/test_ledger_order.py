"""The ledger holds a call's intent before anything irreversible happens."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import make_intent, make_session, make_workspace
from intentd.daemon.tools import files

# Its own process: the file-size limit must not touch the test runner.
SCENARIO = textwrap.dedent("""
    import json, resource, signal, sys
    from pathlib import Path
    from intentd.daemon.engine.engine import Engine
    from intentd.daemon.testing import make_intent, make_session, make_workspace

    state, work = Path(sys.argv[1]), Path(sys.argv[2])
    root = make_workspace(work / "ws", make_intent(owned_scope=["**"]),
                          policy={"auto_approve": {"edit": True}})
    engine = Engine(state, checkpoints=False)
    session = make_session(engine, root)
    engine.run(engine.evaluate(session, "select_active_intent", {"intent_id": "INT-1"}), "auto")
    ledger = engine.ledger(session.workspace)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, not kills
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (ledger.path.stat().st_size + 100, hard))
    ev = engine.evaluate(session, "write_to_file", {"path": "new.txt", "content": "x"})
    report = {"decided": ev.decision.verdict.value}
    try:
        outcome = engine.run(ev, "auto")
        report["stage"] = outcome.decision.stage
        report["ran"] = outcome.result is not None
    except OSError as exc:
        report["error"] = str(exc)
    report["written"] = (root / "new.txt").exists()
    print(json.dumps(report))
""")


def test_a_call_whose_intent_cannot_be_recorded_never_runs(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCENARIO, str(tmp_path / "state"), str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["decided"] == "allow"
    assert not report["written"], "no write without its ledger entry"
    assert (report.get("stage"), report.get("ran")) == ("ledger", False), report


def test_the_intent_is_in_the_ledger_when_the_write_happens(
        tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]),
                          policy={"auto_approve": {"edit": True}})
    session = make_session(engine, root)
    engine.run(engine.evaluate(session, "select_active_intent", {"intent_id": "INT-1"}), "auto")
    ledger_path = engine.ledger(session.workspace).path
    seen: list[list[dict[str, Any]]] = []
    real_write = files.write_text

    def watching_write(path: str, text: str, anchor: Any = None) -> None:
        seen.append([json.loads(line) for line in ledger_path.read_text().splitlines()])
        real_write(path, text, anchor)

    monkeypatch.setattr(files, "write_text", watching_write)
    ev = engine.evaluate(session, "write_to_file", {"path": "new.txt", "content": "x"})
    outcome = engine.run(ev, "auto")
    assert outcome.result is not None and outcome.result.ok
    at_write = [e for e in seen[0] if e["intent"]["id"] == ev.call_id]
    assert [e.get("phase") for e in at_write] == ["intent"]
    assert at_write[0]["intent"]["tool"] == "write_to_file" and at_write[0]["decision"] == "allow"
    lines = [json.loads(line) for line in ledger_path.read_text().splitlines()]
    assert [e.get("phase") for e in lines if e["intent"]["id"] == ev.call_id] == ["intent", None]
