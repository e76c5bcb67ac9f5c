"""The ledger: one complete JSON line per call, with digests and timings, even when the process dies."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.ledger import Ledger, read_ledger
from intentd.daemon.testing import make_session
from intentd.daemon.tools.fileio import sha256_text
from intentd.daemon.trace.chain import verify
from intentd.daemon.utils.statedir import workspace_state_dir


def test_every_call_leaves_a_receipt(tmp_path: Path, workspace: Path) -> None:
    engine = Engine(tmp_path / "state", checkpoints=False)
    session = make_session(engine, workspace)
    for tool, args in [("write_to_file", {"path": "src/x.py", "content": "a"}),
                       ("select_active_intent", {"intent_id": "INT-1"}),
                       ("read_file", {"path": "src/app.py"})]:
        ev = engine.evaluate(session, tool, args)
        engine.run(ev, "auto") if ev.decision.allowed else engine.refuse(ev)
    ev = engine.evaluate(session, "write_to_file", {"path": "src/x.py", "content": "b" * 500})
    engine.run(ev, "person")
    engine.close()
    entries = list(read_ledger(workspace_state_dir(workspace.resolve(), tmp_path / "state")
                               / "ledger.jsonl"))
    assert [(e["intent"]["tool"], e["decision"], e["stage"]) for e in entries] == [
        ("write_to_file", "deny", "intent_gate"), ("select_active_intent", "allow", "approval"),
        ("read_file", "allow", "approval"), ("write_to_file", "ask", "approval")]
    first, last = entries[0], entries[-1]
    assert first["receipt"]["result"] == "not_run" and first["intent"]["intent_id"] is None
    written = str(workspace.resolve() / "src" / "x.py")
    assert last["receipt"]["files_before"] == {written: None}
    assert last["receipt"]["files_after"] == {written: sha256_text("b" * 500)}
    assert last["intent"]["intent_id"] == "INT-1" and last["approved_by"] == "person"
    assert last["intent"]["args"]["content"].endswith("[500 chars]"), "large args are shortened"
    assert len(last["intent"]["args_sha256"]) == 64 and last["receipt"]["timing"]["decided_ms"] >= 0


WRITER = """
import sys
from pathlib import Path
from intentd.daemon.engine.ledger import Ledger
ledger = Ledger(Path(sys.argv[1]))
print("ready", flush=True)
n = 0
while True:
    ledger.append({"n": n, "pad": "x" * (n % 5000)})
    n += 1
"""


def test_a_killed_process_loses_at_most_its_last_line_and_the_next_writer_drops_it(
        tmp_path: Path) -> None:
    # SIGKILL can cut one write(2) of more than a page at a page boundary, so the file may end in
    # a torn line. Readers skip it, the chain names it as torn (not a break), and the next writer
    # to open the ledger removes it before its first entry.
    path = tmp_path / "ledger.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    deadline = time.monotonic() + 30
    while path.read_bytes().count(b"\n") < 50 and time.monotonic() < deadline:
        time.sleep(0.01)  # on a busy machine the writer may take a while to get going
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    whole = path.read_bytes().count(b"\n")
    assert [e["n"] for e in read_ledger(path)] == list(range(whole)) and whole > 10
    report = verify(path)
    assert report.ok and report.lines == whole, report.to_json()

    ledger = Ledger(path)
    ledger.append({"n": "after"})
    ledger.close()
    assert [e["n"] for e in read_ledger(path)] == [*range(whole), "after"]
    assert path.read_bytes().count(b"\n") == whole + 1
    report = verify(path)
    assert report.ok and report.torn is None and report.lines == whole + 1, report.to_json()
