"""`intentd check` end to end: the contract of the README's "How a call is decided", run as a
real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from intentd.daemon.testing import make_call


def check(workspace: Path, lines: list[str], *extra: str) -> list[dict[str, str]]:
    out = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "check", "--workspace",
                          str(workspace), "--json", *extra], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_a_session_of_lines_decides_in_order(workspace: Path) -> None:
    lines = [json.dumps(c) for c in [
        make_call("write_to_file", path="src/new.py", content="x"),
        make_call("select_active_intent", intent_id="INT-1"),
        make_call("write_to_file", path="src/new.py", content="x"),
        make_call("write_to_file", path="README.md", content="x"),
        make_call("replace_in_file", path="src/app.py", old_str="hi", new_str="ho"),
        make_call("read_file", path="src/app.py"),
        make_call("replace_in_file", path="src/app.py", old_str="hi", new_str="ho"),
        make_call("execute_command", command="git status && rm -rf docs"),
        make_call("execute_command", command="git status && npm install"),
        make_call("execute_command", command="ls -la src"),
    ]]
    out = check(workspace, lines)
    assert [(o["tool"], o["decision"], o["stage"]) for o in out] == [
        ("write_to_file", "deny", "intent_gate"), ("select_active_intent", "allow", "approval"),
        ("write_to_file", "ask", "approval"), ("write_to_file", "deny", "scope"),
        ("replace_in_file", "deny", "stale_file"), ("read_file", "allow", "approval"),
        ("replace_in_file", "ask", "approval"), ("execute_command", "deny", "scope"),
        ("execute_command", "ask", "approval"), ("execute_command", "allow", "approval")]
    assert all(set(o) == {"tool", "decision", "stage", "reason"} and o["reason"] for o in out)
    assert not (workspace / "src" / "new.py").exists(), "nothing destructive runs"
    assert (workspace / "src" / "app.py").exists()


def test_bad_lines_are_denied_at_validate_and_the_run_goes_on(workspace: Path, tmp_path: Path) -> None:
    batch = tmp_path / "calls.jsonl"
    batch.write_text("not json\n[1, 2]\n{\"args\": {}}\n\n" +
                     json.dumps(make_call("read_file", path="README.md")) + "\n")
    out = check(workspace, [], "--batch", str(batch))
    assert [(o["tool"], o["decision"], o["stage"]) for o in out] == [
        (None, "deny", "validate"), (None, "deny", "validate"), (None, "deny", "validate"),
        ("read_file", "allow", "approval")]
    assert out[0]["reason"].startswith("not JSON")


def test_policy_flag_and_missing_workspace(workspace: Path, tmp_path: Path) -> None:
    policy = tmp_path / "strict.yaml"
    policy.write_text("auto_approve: {read: false}\n")
    out = check(workspace, [json.dumps(make_call("read_file", path="README.md"))],
                "--policy", str(policy))
    assert out[0]["decision"] == "ask"
    missing = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "check", "--workspace",
                              str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "not a folder" in missing.stderr


def _run_check(workspace: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "check", "--workspace",
                           str(workspace)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=60, check=True)


def test_a_broken_intents_file_is_refused_with_every_problem_by_line(workspace: Path) -> None:
    intents = workspace / ".orchestration" / "active_intents.yaml"
    intents.write_text("active_intents:\n"
                       "  - id: INT-1\n    name: one\n    owned_scope: [src/**]\n"
                       "  - name: two\n    status: IN_PROGRESS\n"
                       "  - id: INT-3\n    name: three\n    status: IN_PROGRESS\n    owned_scope: 7\n")
    out = _run_check(workspace, [json.dumps(make_call("select_active_intent", intent_id="INT-1"))])
    decision = json.loads(out.stdout)
    assert decision["decision"] == "deny" and "not listed" not in decision["reason"]
    assert f"{intents}:2: intent 'INT-1' has no `status`" in decision["reason"]
    assert out.stderr.splitlines() == [
        f"intentd check: {intents}:2: intent 'INT-1' has no `status`",
        f"intentd check: {intents}:5: intent has no `id`",
        f"intentd check: {intents}:10: intent 'INT-3': owned_scope must be a list, got a number"]


def test_no_intents_file_is_named_as_the_cause(workspace: Path) -> None:
    (workspace / ".orchestration" / "active_intents.yaml").unlink()
    out = _run_check(workspace, [json.dumps(make_call("select_active_intent", intent_id="INT-1"))])
    decision = json.loads(out.stdout)
    assert decision["decision"] == "deny" and "there is no intents file" in decision["reason"]
    assert out.stderr.startswith("intentd check: no intents file (")


def test_each_line_is_one_call_of_the_session_counted_once(tmp_path: Path) -> None:
    """Repetition and max_consecutive count lines, each once: an "ask" line is never rechecked
    or counted again, and the check-in comes after exactly max_consecutive allowed changes."""
    from intentd.daemon.testing import make_intent, make_workspace

    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy={
        "auto_approve": {"edit": True, "max_consecutive": 2}}, files={"a.txt": "a"})
    read = json.dumps(make_call("read_file", path="a.txt"))
    writes = [json.dumps(make_call("write_to_file", path=f"w{i}.txt", content="x"))
              for i in range(4)]
    out = check(root, [json.dumps(make_call("select_active_intent", intent_id="INT-1")),
                       read, read, read, read, *writes])
    assert [(o["decision"], o["stage"]) for o in out[1:5]] == [
        ("allow", "approval")] * 3 + [("deny", "repetition")]
    assert [o["decision"] for o in out[5:]] == ["allow", "allow", "ask", "allow"]
