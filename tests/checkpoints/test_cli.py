"""`intentd checkpoints list|diff|restore` end to end, as a person runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from intentd.daemon.checkpoints import CheckpointStore
from intentd.daemon.utils.statedir import workspace_state_dir

from .conftest import write


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "checkpoints", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=60)


def daemon_store(ws: Path) -> CheckpointStore:
    """A store where the engine keeps it, which is where the CLI looks."""
    root = ws.resolve()
    return CheckpointStore(root, workspace_state_dir(root) / "checkpoints", watch=False)


def test_list_diff_restore(ws: Path) -> None:
    with daemon_store(ws) as store:
        cp = store.create(None, label="before rm")
    write(ws, "src/app.py", "print('agent')\n")
    write(ws, "agent.txt", "new\n")

    listing = cli("list", "--workspace", str(ws), cwd=ws)
    assert listing.returncode == 0 and cp.id in listing.stdout and "before rm" in listing.stdout
    as_json = json.loads(cli("list", "--json", cwd=ws).stdout)
    assert as_json[0]["id"] == cp.id and as_json[0]["kind"] == "command"

    diff = cli("diff", cp.id, "--path", "src", cwd=ws)
    assert diff.returncode == 0 and "+print('agent')" in diff.stdout and "agent.txt" not in diff.stdout
    diffs = json.loads(cli("diff", cp.id, "--json", "--against", "next", cwd=ws).stdout)
    assert {d["path"]: d["status"] for d in diffs} == {"src/app.py": "modified", "agent.txt": "added"}

    restored = cli("restore", cp.id, "--json", cwd=ws)
    assert restored.returncode == 0, restored.stderr
    result = json.loads(restored.stdout)
    assert result["restored"] == ["src/app.py"] and result["deleted"] == ["agent.txt"]
    assert (ws / "src/app.py").read_text() == "print('hi')\n" and not (ws / "agent.txt").exists()

    undo = cli("restore", result["safety_checkpoint_id"], cwd=ws)
    assert undo.returncode == 0 and "restored" in undo.stdout
    assert (ws / "agent.txt").read_text() == "new\n"


def test_errors_are_one_line_and_exit_1(ws: Path, tmp_path: Path) -> None:
    with daemon_store(ws) as store:
        store.create(["README.md"], label="one")
    for args in (["diff", "cp-000099"], ["restore", "nonsense"], ["restore", "1", "--path", "../x"],
                 ["list", "--workspace", str(tmp_path / "gone")]):
        done = cli(*args, cwd=ws)
        assert done.returncode == 1, args
        assert done.stderr.startswith("intentd checkpoints: ") and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1


def test_a_workspace_without_checkpoints(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("list", cwd=empty).stdout.strip() == "no checkpoints yet"
    assert cli("list", "--json", cwd=empty).stdout.strip() == "[]"
    done = cli("diff", "cp-000001", cwd=empty)
    assert done.returncode == 1 and "no checkpoints yet" in done.stderr
    assert not (workspace_state_dir(empty.resolve()) / "checkpoints").exists()


def test_restore_exits_1_when_it_left_paths_alone(ws: Path) -> None:
    with daemon_store(ws) as store:
        cp = store.create(None, label="baseline")
        store.create(["src/app.py"], label="first edit after a restart")
        time.sleep(0.05)  # file times lag the checkpoint's clock by a tick or two
        write(ws, "gap.txt", "made while nobody watched\n")
        store.create(None, label="command")
    done = cli("restore", cp.id, cwd=ws)
    assert done.returncode == 1
    assert "  left     gap.txt: no state at this checkpoint; left in place" in done.stdout
    assert "undo with:" in done.stdout and "1 path(s) left" in done.stderr
    as_json = cli("restore", cp.id, "--json", cwd=ws)
    assert as_json.returncode == 1
    skipped = json.loads(as_json.stdout)["skipped"]
    assert skipped == [["gap.txt", "no state at this checkpoint; left in place"]]


def test_the_cli_applies_the_workspace_policy_rules(ws: Path) -> None:
    """A file .orchestration/ignore hides is neither copied into the store nor touched."""
    write(ws, ".orchestration/ignore", "secrets/\n")
    with daemon_store(ws) as store:
        cp = store.create(None, label="baseline")
    write(ws, "secrets/key.pem", "private\n")
    restored = cli("restore", cp.id, "--json", cwd=ws)
    assert restored.returncode == 0, restored.stderr
    safety = json.loads(restored.stdout)["safety_checkpoint_id"]
    files = {c["id"]: c["files"] for c in json.loads(cli("list", "--json", cwd=ws).stdout)}
    assert files[safety] == [] and (ws / "secrets/key.pem").read_text() == "private\n"
