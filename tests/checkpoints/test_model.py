"""The checkpoint values' JSON: the wire fields docs/protocol.md documents, written in one place."""

from __future__ import annotations

import json

from intentd.daemon.checkpoints import Checkpoint, FileDiff, RestoreResult


def test_json_shapes_match_the_protocol() -> None:
    checkpoint = Checkpoint("cp-000001", 1.5, "before x", ("a.py",), (("big.bin", "too big"),), "files")
    assert checkpoint.to_json() == {"id": "cp-000001", "created_at": 1.5, "label": "before x",
                                    "kind": "files", "files": ["a.py"],
                                    "skipped": [["big.bin", "too big"]]}
    diff = FileDiff("a.py", "modified", "diff --git a/a.py b/a.py\n")
    assert diff.to_json() == {"path": "a.py", "status": "modified", "unified": diff.unified}
    result = RestoreResult("cp-000001", "cp-000002", ("a.py",), ("new.py",), (("b.py", "why"),))
    assert result.to_json() == {"checkpoint_id": "cp-000001", "safety_checkpoint_id": "cp-000002",
                                "restored": ["a.py"], "deleted": ["new.py"], "skipped": [["b.py", "why"]]}
    for value in (checkpoint, diff, result):
        json.dumps(value.to_json())
