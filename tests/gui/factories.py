"""Records as the daemon sends them, for model and state tests."""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count(1)


def approval_json(workspace: str = "/w/proj", created_at: float | None = None,
                  **extra: Any) -> dict[str, Any]:
    n = next(_ids)
    return {"id": f"a-{n}", "workspace": workspace, "session_id": f"s-{n}", "agent": "claude-code",
            "intent_id": "INT-1", "tool": "write_to_file",
            "args": {"path": f"src/f{n}.py", "content": "x = 1\n"}, "stage": "approval",
            "reason": "auto-approval of edits is off",
            "diff": f"--- a/src/f{n}.py\n+++ b/src/f{n}.py\n@@ -0,0 +1 @@\n+x = 1\n",
            "created_at": float(n) if created_at is None else created_at, "batch": None,
            **extra}


def intent_json(id: str = "INT-1", status: str = "IN_PROGRESS", **extra: Any) -> dict[str, Any]:
    return {"id": id, "name": f"intent {id}", "status": status, "owned_scope": ["src/**"],
            "constraints": ["no new deps"], "acceptance_criteria": ["tests pass"],
            "selectable": status == "IN_PROGRESS", **extra}


def ledger_json(workspace: str = "/w/proj", decision: str = "allow", tool: str = "read_file",
                time: str | None = None, **extra: Any) -> dict[str, Any]:
    n = next(_ids)
    return {"v": 1, "intent": {"id": f"c-{n}", "time": time or f"2026-11-21T10:00:{n % 60:02d}"
                               "+00:00", "session": "s-1", "agent": "claude-code",
                               "workspace": workspace, "intent_id": "INT-1", "tool": tool},
            "decision": decision, "stage": "approval", "reason": f"reason {n}",
            "approved_by": "auto", "receipt": {"result": "success"}, **extra}
