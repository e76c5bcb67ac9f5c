"""Stage by stage: validation of untrusted calls, repetition, and a crashing stage failing closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.pipeline import Pipeline, default_stages
from intentd.daemon.testing import make_session, make_workspace


def decide(engine: Engine, session: Any, tool: Any, args: Any) -> Decision:
    ev = engine.evaluate(session, tool, args)
    engine.apply_dry_run(ev)
    return ev.decision


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(("tool", "args", "fragment"), [
    ("rm_everything", {}, "unknown tool 'rm_everything'"),
    (None, {}, "no tool name"),
    (["read_file"], {}, "no tool name"),
    ("read_file", ["x"], "must be a JSON object"),
    ("read_file", {}, "args.path is required"),
    ("read_file", {"path": 3}, "args.path must be string, got integer"),
    ("read_file", {"path": "a", "start_line": True}, "must be integer, got boolean"),
    ("read_file", {"path": "a", "start_line": 0}, "must be ≥ 1"),
    ("read_file", {"path": "a", "start_line": 5, "end_line": 2}, "end_line must be ≥ start_line"),
    ("read_file", {"path": "a", "mode": "w"}, "unknown property 'mode'"),
    ("read_file", {"path": "a\x00b"}, "NUL byte"),
    ("read_file", {"path": "   "}, "empty path"),
    ("replace_in_file", {"path": "a"}, "either old_str and new_str, or a list of edits"),
    ("replace_in_file", {"path": "a", "old_str": "x"}, "go together"),
    ("replace_in_file", {"path": "a", "edits": [{"old_str": "", "new_str": "b"}]}, "not be empty"),
    ("execute_command", {"command": "ls", "cwd": "../.."}, "outside the workspace"),
    ("execute_command", {"command": "ls", "timeout": 100000}, "must be ≤ 600"),
    ("read_file", {"path": "src/\udcff.txt"}, "args.path is not valid Unicode"),
    ("write_to_file", {"path": "a", "content": "x\ud800"}, "args.content is not valid Unicode"),
    ("replace_in_file", {"path": "a", "edits": [{"old_str": "a", "new_str": "\udfff"}]},
     "args.edits[0].new_str is not valid Unicode"),
    ("write_to_file", {"path": "a", "content": "x", "\udcffk": 1}, "a key of args"),
    ("mcp__srv__tool", {"a": [{"b": ["ok", "\ud800"]}]}, "args.a[0].b[1] is not valid Unicode"),
    ("read\udcff", {}, "unknown tool"),
    ("mcp__srv__tool", {"a": _nested(100)}, "nested more than 64 levels deep"),
])
def test_bad_calls_are_refused_at_validate(engine: Engine, workspace: Path, tool: Any, args: Any,
                                           fragment: str) -> None:
    decision = decide(engine, make_session(engine, workspace), tool, args)
    assert (decision.verdict.value, decision.stage) == ("deny", "validate")
    assert fragment in decision.reason


def test_the_fourth_identical_call_is_stopped_then_counting_restarts(engine: Engine,
                                                                     workspace: Path) -> None:
    session = make_session(engine, workspace)
    args = {"path": "README.md"}
    stages = [decide(engine, session, "read_file", args).stage for _ in range(8)]
    assert stages == ["approval"] * 3 + ["repetition"] + ["approval"] * 3 + ["repetition"]


def test_key_order_does_not_matter_but_value_types_do(engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace)
    decide(engine, session, "read_file", {"path": "README.md", "start_line": 1})
    decide(engine, session, "read_file", {"start_line": 1, "path": "README.md"})
    decide(engine, session, "read_file", {"path": "README.md", "start_line": 1})
    assert decide(engine, session, "read_file",
                  {"start_line": 1, "path": "README.md"}).stage == "repetition"
    for different in ("1", 1.0, True):
        other = make_session(engine, workspace)
        for _ in range(3):
            decide(engine, other, "mcp__db__query", {"n": 1})
        assert decide(engine, other, "mcp__db__query", {"n": different}).stage == "intent_gate"


def test_repetition_limit_zero_disables_it(tmp_path: Path, engine: Engine) -> None:
    root = make_workspace(tmp_path / "ws", policy={"repetition": {"limit": 0}},
                          files={"a.txt": "a"})
    session = make_session(engine, root)
    stages = {decide(engine, session, "read_file", {"path": "a.txt"}).stage for _ in range(10)}
    assert stages == {"approval"}


def test_a_short_cycle_repeated_five_times_is_stopped(engine: Engine, workspace: Path) -> None:
    session = make_session(engine, workspace)
    cycle = [("read_file", {"path": "README.md"}), ("list_files", {"path": "src"}),
             ("read_file", {"path": "src/app.py"})]
    stages = [decide(engine, session, tool, args).stage for _ in range(5) for tool, args in cycle]
    assert stages[:-1] == ["approval"] * 14 and stages[-1] == "repetition"


class ExplodingStage:
    name = "exploding"

    def check(self, ctx: CallContext) -> Decision | None:
        raise RuntimeError("bug")


def test_a_crashing_stage_denies(tmp_path: Path, workspace: Path) -> None:
    engine = Engine(tmp_path / "s", pipeline=Pipeline([*default_stages()[:1], ExplodingStage(),
                                                       *default_stages()[1:]]), checkpoints=False)
    decision = decide(engine, make_session(engine, workspace), "read_file", {"path": "README.md"})
    assert (decision.verdict.value, decision.stage) == ("deny", "exploding")
    assert "internal error" in decision.reason and "RuntimeError" in decision.reason
    engine.close()


def test_consecutive_auto_approvals_count_changes_not_reads(tmp_path: Path,
                                                            engine: Engine) -> None:
    """max_consecutive stops a run of auto-approved changes; reads and read-only commands
    neither count nor break it."""
    files = {f"f{i}.txt": str(i) for i in range(7)}
    root = make_workspace(tmp_path / "ws", policy={"auto_approve": {
        "read": True, "edit": True, "safe_commands": True, "max_consecutive": 3}}, files=files)
    session = make_session(engine, root)
    decide(engine, session, "select_active_intent", {"intent_id": "INT-1"})
    reads = [decide(engine, session, "read_file", {"path": name}).verdict.value for name in files]
    assert reads == ["allow"] * 7
    verdicts = []
    for i in range(5):
        verdicts.append(decide(engine, session, "write_to_file",
                               {"path": f"src/w{i}.txt", "content": "x"}).verdict.value)
        decide(engine, session, "read_file", {"path": "f0.txt"})  # reads between: no reset
        looked = decide(engine, session, "execute_command", {"command": f"cat f{i}.txt"})
        assert (looked.verdict.value, looked.stage) == ("allow", "approval")  # never a check-in
    assert verdicts == ["allow", "allow", "allow", "ask", "allow"]
