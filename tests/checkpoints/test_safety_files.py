"""`intentd checkpoints list` counts the files a restore's safety checkpoint keeps for the undo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from intentd.daemon.checkpoints import CheckpointStore


def listing(root: Path, state: Path) -> list[dict[str, object]]:
    out = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "checkpoints", "list",
                          "--workspace", str(root), "--state-dir", str(state), "--json"],
                         capture_output=True, text=True, timeout=60, check=True)
    return list(json.loads(out.stdout))


def test_a_safety_checkpoint_counts_what_it_keeps_even_when_nothing_changed_since_the_last(
        tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    (root / "a.txt").write_text("first")
    with CheckpointStore(root, state, watch=False) as store:
        first = store.create(["a.txt"], label="before the edit")
        (root / "a.txt").write_text("edited")
        (root / "b.txt").write_text("new")
        store.create(None, label="after a command")  # the latest checkpoint already has them
        safety = store.restore(first.id).safety_checkpoint_id
    assert (root / "a.txt").read_text() == "first"
    shown = {c["id"]: c["files"] for c in listing(root, state)}
    assert shown[safety] == ["a.txt", "b.txt"], "it keeps both for the undo"
    text = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "checkpoints", "list",
                           "--workspace", str(root), "--state-dir", str(state)],
                          capture_output=True, text=True, timeout=60, check=True).stdout
    assert any(line.startswith(safety) and " 2  safety" in line for line in text.splitlines())
