"""The checkpoint values' JSON: the wire fields docs/protocol.md documents, written in one place."""

from __future__ import annotations

import json

from intentd.daemon.checkpoints import Checkpoint, Coverage, FileDiff, RestoreResult


def test_json_shapes_match_the_protocol() -> None:
    checkpoint = Checkpoint("cp-000001", 1.5, "before x", ("a.py",), (("big.bin", "too big"),), "files",
                            "full scan: no file watcher")
    assert checkpoint.to_json() == {"id": "cp-000001", "created_at": 1.5, "label": "before x",
                                    "kind": "files", "files": ["a.py"],
                                    "skipped": [["big.bin", "too big"]],
                                    "coverage": "full scan: no file watcher"}
    coverage = Coverage(True, 10, ("a", "b"), "the inotify watch limit is reached", 1)
    assert coverage.to_json() == {
        "mode": "partial", "watched_folders": 10, "unwatched": ["a", "b"], "unwatched_count": 2,
        "reason": "the inotify watch limit is reached", "overflows": 1,
        "summary": "watching 10 folders; 2 folder(s) scanned at every command checkpoint "
                   "(the inotify watch limit is reached)"}
    diff = FileDiff("a.py", "modified", "diff --git a/a.py b/a.py\n")
    assert diff.to_json() == {"path": "a.py", "status": "modified", "unified": diff.unified}
    result = RestoreResult("cp-000001", "cp-000002", ("a.py",), ("new.py",), (("b.py", "why"),))
    assert result.to_json() == {"checkpoint_id": "cp-000001", "safety_checkpoint_id": "cp-000002",
                                "restored": ["a.py"], "deleted": ["new.py"], "skipped": [["b.py", "why"]]}
    for value in (checkpoint, coverage, diff, result):
        json.dumps(value.to_json())
