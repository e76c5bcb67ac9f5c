"""The in-process pipeline: terminal approvals, rejections that skip the turn, Ctrl-C held."""

from __future__ import annotations

import io
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.agents.approver import TerminalApprover
from intentd.daemon.agents.local_gateway import Answer, LocalGateway, deferred_interrupt
from intentd.daemon.engine.engine import Engine, Evaluation
from intentd.daemon.engine.ledger import read_ledger
from intentd.daemon.testing import make_workspace


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def gateway(tmp_path: Path, engine: Engine) -> LocalGateway:
    ws = make_workspace(tmp_path / "ws", files={"src/app.py": "x = 1\n"})
    return LocalGateway(ws, "test", TerminalApprover(Terminal("y\nfine\n"), io.StringIO()),
                        engine=engine)


def test_the_terminal_shows_the_diff_and_takes_feedback(gateway: LocalGateway) -> None:
    out = io.StringIO()
    gateway.approver = TerminalApprover(Terminal("y\nlooks good\n"), out)
    gateway.call("select_active_intent", {"intent_id": "INT-1"})
    gateway.call("read_file", {"path": "src/app.py"})
    result = gateway.call("replace_in_file", {"path": "src/app.py", "old_str": "1", "new_str": "2"})
    assert result.ran and result.ok and result.approved_by == "person"
    assert result.feedback == "looks good"
    shown = out.getvalue()
    assert "-x = 1" in shown and "+x = 2" in shown and "auto-approval of edits is off" in shown
    assert (gateway.workspace / "src" / "app.py").read_text() == "x = 2\n"


def test_the_ledger_records_an_approved_call_as_allowed_by_a_person(
        gateway: LocalGateway) -> None:
    gateway.call("select_active_intent", {"intent_id": "INT-1"})
    result = gateway.call("write_to_file", {"path": "src/new.py", "content": "y\n"})
    written = [e for e in ledger(gateway) if e["intent"]["tool"] == "write_to_file"]
    assert [(e["decision"], e["stage"], e["reason"], e["approved_by"]) for e in written] == [
        ("allow", "approval", "approved by a person", "person")]  # as the daemon records it
    assert result.ran and (result.stage, result.reason) == ("approval", "approved by a person")


def test_a_restore_says_what_it_left_alone(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", policy={"auto_approve": {"edit": True}},
                        files={"src/app.py": "x = 1\n"})
    engine = Engine(tmp_path / "state")  # with checkpoints
    try:
        gateway = LocalGateway(ws, "test", TerminalApprover(), engine=engine)
        gateway.call("select_active_intent", {"intent_id": "INT-1"})
        gateway.call("read_file", {"path": "src/app.py"})
        written = gateway.call("write_to_file", {"path": "src/app.py", "content": "x = 2\n"})
        assert written.checkpoint_id, written
        (ws / "src" / "app.py").write_bytes(b"#" * (6 * 2**20))  # over the store's size cap
        done = gateway.restore(written.checkpoint_id)
    finally:
        engine.close()
    assert done["restored"] == [] and done["safety_checkpoint_id"]
    [(path, why)] = done["skipped"]
    assert path == "src/app.py" and "not saved" in why


def ledger(gateway: LocalGateway) -> list[dict[str, Any]]:
    return list(read_ledger(gateway.engine.ledger(gateway.session.workspace).path))


def test_a_rejection_skips_the_rest_of_the_turn(gateway: LocalGateway) -> None:
    answers = iter([Answer(False, "not there")])
    asked: list[Evaluation] = []

    def approver(ev: Evaluation) -> Answer:
        asked.append(ev)
        return next(answers)

    gateway.approver = approver
    gateway.call("select_active_intent", {"intent_id": "INT-1"})
    first = gateway.call("write_to_file", {"path": "src/a.py", "content": "a"}, batch="turn-2")
    second = gateway.call("write_to_file", {"path": "src/b.py", "content": "b"}, batch="turn-2")
    assert (first.stage, first.feedback) == ("approval", "not there")
    assert "rejected by the person: not there" in first.for_model()
    assert not second.ran and "skipped" in second.reason and len(asked) == 1


def test_without_a_terminal_nobody_is_asked(gateway: LocalGateway) -> None:
    gateway.approver = TerminalApprover(io.StringIO("y\n"), io.StringIO())
    gateway.call("select_active_intent", {"intent_id": "INT-1"})
    result = gateway.call("write_to_file", {"path": "src/a.py", "content": "a"}, batch="t")
    assert not result.ran and "none can be asked" in result.reason
    assert gateway.session.rejected_batch is None, "not a person's rejection"


def test_ctrl_c_is_held_until_the_step_is_done() -> None:
    # what was there before comes back: Python's own handler, or SIG_IGN where a shell started
    # the tests in the background
    before = signal.getsignal(signal.SIGINT)
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
            finished.append(True)
    assert finished == [True]
    assert signal.getsignal(signal.SIGINT) is before
