"""One call's life (Engine.call): the approver's answers, the rejected turn, counting once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.engine import Engine, Evaluation, Execution, Outcome
from intentd.daemon.engine.ledger import read_ledger
from intentd.daemon.engine.lifecycle import (
    NOBODY,
    Answer,
    BlockingWork,
    HandOff,
    NoAnswer,
    Reply,
)
from intentd.daemon.engine.session import Session
from intentd.daemon.engine.stages import Finding
from intentd.daemon.engine.stages.access import AccessStage
from intentd.daemon.engine.stages.validate import ValidateStage
from intentd.daemon.testing import make_intent, make_session, make_workspace

WRITE = {"path": "src/new.py", "content": "x = 1\n"}


class Scripted:
    """An approver that gives the answers it was handed, in order, and notes what it was asked."""

    def __init__(self, *replies: Reply | BaseException) -> None:
        self.replies = list(replies)
        self.asked: list[Evaluation] = []

    def ask(self, ev: Evaluation) -> Reply:
        self.asked.append(ev)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def withdrawn(self, error: BaseException) -> str:
        return f"withdrawn: {type(error).__name__}"


def counters(session: Session) -> tuple[list[str], int, int]:
    return list(session.recent_calls), session.same_call_count, session.auto_approved_in_row


def selected(engine: Engine, root: Path) -> Session:
    session = make_session(engine, root)
    engine.call(session, "select_active_intent", {"intent_id": "INT-1"}, approver=NOBODY)
    return session


def ledger_lines(engine: Engine, session: Session) -> list[dict[str, Any]]:
    return [e for e in read_ledger(engine.ledger(session.workspace).path)
            if e.get("phase") != "intent"]


def test_an_approved_call_runs_and_its_receipt_names_the_person(engine: Engine,
                                                                 workspace: Path) -> None:
    session = selected(engine, workspace)
    approver = Scripted(Answer(True, "fine"))
    outcome = engine.call(session, "write_to_file", WRITE, approver=approver)
    assert len(approver.asked) == 1 and outcome.result is not None and outcome.result.ok
    assert (outcome.decision.reason, outcome.approved_by, outcome.feedback) == (
        "approved by a person", "person", "fine")
    assert (workspace / "src" / "new.py").read_text() == "x = 1\n"
    last = ledger_lines(engine, session)[-1]
    assert (last["decision"], last["reason"], last["approved_by"]) == (
        "allow", "approved by a person", "person")


def test_a_rejection_skips_the_rest_of_its_turn_and_only_that_turn(engine: Engine,
                                                                   workspace: Path) -> None:
    session = selected(engine, workspace)
    approver = Scripted(Answer(False, "not that"), Answer(True))
    first = engine.call(session, "write_to_file", WRITE, "turn-1", approver=approver)
    second = engine.call(session, "write_to_file", {**WRITE, "path": "src/b.py"}, "turn-1",
                         approver=approver)
    third = engine.call(session, "write_to_file", {**WRITE, "path": "src/c.py"}, "turn-2",
                        approver=approver)
    assert first.decision.reason == "rejected by the person: not that"
    assert first.feedback == "not that"
    assert "skipped" in second.decision.reason and second.result is None
    assert third.result is not None and len(approver.asked) == 2
    assert not (workspace / "src" / "b.py").exists()


def test_a_hooks_rejected_call_leaves_the_rest_of_its_turn_to_be_asked(engine: Engine,
                                                                      workspace: Path) -> None:
    """A hook's agent gets the feedback and acts on it in the same turn: its next call of that
    turn is asked about again, not skipped."""
    session = selected(engine, workspace)
    approver = Scripted(Answer(False, "use src/b.py"), Answer(True))
    first = engine.call(session, "write_to_file", WRITE, "turn-1", approver=approver,
                        execution=Execution.ELSEWHERE)
    second = engine.call(session, "write_to_file", {**WRITE, "path": "src/b.py"}, "turn-1",
                         approver=approver, execution=Execution.ELSEWHERE)
    assert first.decision.reason == "rejected by the person: use src/b.py"
    assert second.decision.allowed and len(approver.asked) == 2
    assert session.rejected_batch is None


def test_nobody_to_ask_refuses_without_rejecting_the_turn(engine: Engine,
                                                          workspace: Path) -> None:
    session = selected(engine, workspace)
    approver = Scripted(NoAnswer("nobody here"), Answer(True))
    first = engine.call(session, "write_to_file", WRITE, "t", approver=approver)
    second = engine.call(session, "write_to_file", {**WRITE, "path": "src/b.py"}, "t",
                         approver=approver)
    assert (first.decision.verdict.value, first.decision.reason) == ("deny", "nobody here")
    assert second.result is not None and session.rejected_batch is None


def test_a_hand_off_refuses_a_call_that_would_run_here(engine: Engine, workspace: Path) -> None:
    """Only a client that runs the call itself has a prompt of its own to hand it to."""
    session = selected(engine, workspace)
    outcome = engine.call(session, "write_to_file", WRITE, approver=Scripted(HandOff()))
    assert outcome.decision.verdict.value == "deny" and outcome.result is None
    assert not (workspace / "src" / "new.py").exists()


def test_a_hand_off_authorizes_for_the_agents_prompt_and_the_report_records_it(
        engine: Engine, workspace: Path) -> None:
    session = selected(engine, workspace)
    outcome = engine.call(session, "write_to_file", WRITE, approver=Scripted(HandOff()),
                          execution=Execution.ELSEWHERE)
    assert outcome.decision.verdict.value == "ask"
    assert "the agent's own prompt asks you" in outcome.decision.reason
    reported = engine.report(session, outcome.call_id, True, "done")
    assert reported is not None and reported.decision.verdict.value == "allow"
    assert ledger_lines(engine, session)[-1]["approved_by"] == "person (in the agent's own prompt)"


def test_an_interrupted_approver_withdraws_the_call_on_the_record(engine: Engine,
                                                                  workspace: Path) -> None:
    session = selected(engine, workspace)
    with pytest.raises(KeyboardInterrupt):
        engine.call(session, "write_to_file", WRITE, approver=Scripted(KeyboardInterrupt()))
    last = ledger_lines(engine, session)[-1]
    assert (last["decision"], last["reason"]) == ("deny", "withdrawn: KeyboardInterrupt")
    assert not (workspace / "src" / "new.py").exists()


def test_the_blocking_work_goes_where_the_caller_says(engine: Engine, workspace: Path) -> None:
    session = selected(engine, workspace)
    seen: list[str] = []

    def blocking(need: BlockingWork) -> Outcome:
        seen.append(str(need.ev.ctx.name))
        return need.work()

    engine.call(session, "read_file", {"path": "README.md"}, approver=NOBODY, blocking=blocking)
    assert seen == ["read_file"]


def test_on_an_event_loop_an_authorized_read_stays_on_the_loop(engine: Engine,
                                                               workspace: Path) -> None:
    """The lifecycle, not the caller, knows what may block: a read without hooks does not."""
    session = selected(engine, workspace)
    offloaded: list[str] = []

    class Queue:
        async def ask(self, ev: Evaluation) -> Reply:
            return Answer(True)

        def withdrawn(self, error: BaseException) -> str:
            return "withdrawn"

    async def offload(need: BlockingWork) -> Outcome:
        offloaded.append(str(need.ev.ctx.name))
        return await asyncio.to_thread(need.work)

    async def both() -> tuple[Outcome, Outcome]:
        read = await engine.call_async(session, "read_file", {"path": "README.md"},
                                       approver=Queue(), execution=Execution.ELSEWHERE,
                                       offload=offload)
        write = await engine.call_async(session, "write_to_file", WRITE, approver=Queue(),
                                        execution=Execution.ELSEWHERE, offload=offload)
        return read, write

    read, write = asyncio.run(both())
    assert read.decision.allowed and write.decision.reason == "approved by a person"
    assert offloaded == ["write_to_file"]


def test_only_work_that_runs_no_program_is_brief(engine: Engine, tmp_path: Path) -> None:
    """The daemon's loop waits a moment for brief work (ToolThreads.run); a hook or a command
    may run for minutes, so work with one is never brief."""
    plain = make_workspace(tmp_path / "plain", make_intent(owned_scope=["**"]))
    hooked = make_workspace(tmp_path / "hooked", make_intent(owned_scope=["**"]),
                            policy={"hooks": {"post_tool": [{"command": "true"}]}})
    briefs: list[tuple[str, bool]] = []

    async def offload(need: BlockingWork) -> Outcome:
        briefs.append((str(need.ev.ctx.name), need.ev.ctx.brief))
        return await asyncio.to_thread(need.work)

    class Yes:
        async def ask(self, ev: Evaluation) -> Reply:
            return Answer(True)

        def withdrawn(self, error: BaseException) -> str:
            return "withdrawn"

    async def calls() -> None:
        for root, tool, args in ((plain, "write_to_file", WRITE),
                                 (plain, "execute_command", {"command": "touch made"}),
                                 (hooked, "write_to_file", WRITE)):
            session = selected(engine, root)
            await engine.call_async(session, tool, args, approver=Yes(),
                                    execution=Execution.ELSEWHERE, offload=offload)

    asyncio.run(calls())
    assert briefs == [("write_to_file", True), ("execute_command", False),
                      ("write_to_file", False)]


# -- deciding is apart from counting ------------------------------------------------------------

def test_deciding_a_call_counts_nothing(engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace)
    for _ in range(6):
        ev = engine.decide(session, "read_file", {"path": "README.md"})
        assert ev.decision.verdict.value == "allow"  # never the repetition stage's refusal
    assert counters(session) == ([], 0, 0)


def test_a_dry_run_counts_each_call_once(engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace)
    stages = [engine.call(session, "read_file", {"path": "README.md"}, approver=NOBODY,
                          execution=Execution.DRY_RUN).decision.stage for _ in range(4)]
    assert stages == ["approval"] * 3 + ["repetition"]


def test_the_recheck_of_an_approved_call_does_not_count_it_again(tmp_path: Path,
                                                                 engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy={
        "auto_approve": {"edit": True, "max_consecutive": 2}})
    session = selected(engine, root)
    before = counters(session)
    outcome = engine.call(session, "write_to_file", {"path": "a.txt", "content": "a"},
                          approver=NOBODY)  # auto-approved: decided, counted, rechecked, run
    recent, same, in_row = counters(session)
    assert outcome.result is not None and outcome.result.ok
    assert len(recent) == len(before[0]) + 1 and same == 1 and in_row == 1
    second = engine.call(session, "write_to_file", {"path": "b.txt", "content": "b"},
                         approver=NOBODY)
    third = engine.call(session, "write_to_file", {"path": "c.txt", "content": "c"},
                        approver=Scripted(Answer(True)))
    assert second.decision.allowed and session.auto_approved_in_row == 0
    assert third.decision.reason == "approved by a person"  # the check-in came at the third


def test_a_person_asked_starts_the_auto_approval_run_again(tmp_path: Path,
                                                           engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy={
        "auto_approve": {"edit": True, "max_consecutive": 5}})
    session = selected(engine, root)
    engine.call(session, "write_to_file", {"path": "a.txt", "content": "a"}, approver=NOBODY)
    assert session.auto_approved_in_row == 1
    engine.call(session, "execute_command", {"command": "make build"},
                approver=Scripted(Answer(False)))
    assert session.auto_approved_in_row == 0


# -- stages return what they find ---------------------------------------------------------------

def test_stages_return_what_they_find_and_leave_the_context_alone(engine: Engine,
                                                                  workspace: Path) -> None:
    session = make_session(engine, workspace)
    ctx = CallContext(session, session.workspace.config, "read_file", {"path": "../x.txt"})
    found = ValidateStage().check(ctx)
    assert isinstance(found, Finding) and found.decision is None and found.tool is not None
    assert ctx.tool is None and ctx.paths == ()
    ctx.take(found)
    access = AccessStage().check(ctx)
    assert isinstance(access, Finding) and access.not_auto == ("../x.txt is outside the workspace",)
    assert ctx.not_auto == []


def test_a_writes_intent_line_and_receipt_carry_the_same_arguments(engine: Engine,
                                                                    workspace: Path) -> None:
    session = selected(engine, workspace)
    long_text = "y = 2\n" * 100  # longer than the ledger keeps: shortened, and hashed whole
    outcome = engine.call(session, "write_to_file", {"path": "src/new.py", "content": long_text},
                          approver=Scripted(Answer(True)))
    assert outcome.result is not None and outcome.result.ok
    lines = [json.loads(line) for line in engine.ledger(session.workspace).path.open()]
    intent, receipt = lines[-2], lines[-1]
    assert list(intent) == ["v", "phase", "intent", "decision", "stage", "reason", "chain"]
    assert intent["phase"] == "intent" and "phase" not in receipt
    assert intent["intent"] == receipt["intent"]
    assert receipt["intent"]["args"]["content"].endswith(f"... [{len(long_text)} chars]")
    assert len(receipt["intent"]["args_sha256"]) == 64
