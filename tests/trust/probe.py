"""Tries every person method over the socket, as the app would; prints what each answered.

Run as a separate process (`python probe.py SOCKET WORKSPACE [APPROVAL_ID [CHECKPOINT_ID]]`):
from a command intentd runs, or under a (fake) agent. Prints one JSON object,
{"answers": {"method": error code or "ok"}, "ppid": N}, and writes it to $PROBE_OUT when that is set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError


def person_methods() -> list[str]:
    return [m for m, side in protocol.METHOD_SIDES.items() if side == protocol.PERSON]


def params_for(method: str, workspace: str, approval: str, checkpoint: str) -> dict[str, Any]:
    return {
        protocol.APPROVALS_RESPOND: {"approval_id": approval, "decision": protocol.APPROVE},
        protocol.CHECKPOINTS_RESTORE: {"workspace": workspace, "checkpoint_id": checkpoint},
        protocol.SETTINGS_UPDATE: {"workspace": workspace, "auto_approve": {"all_commands": True,
                                                                           "edit": True}},
        protocol.SETTINGS_CONFIRM: {"workspace": workspace, "confirmation_id": "set-1",
                                    "decision": protocol.APPROVE},
    }.get(method, {"workspace": workspace})


def from_a_child(socket_path: str, workspace: str) -> dict[str, object]:
    """The answers of this probe run as a child of the calling process (as an agent's own shell
    command would be), or {"error": what it printed} when it failed."""
    done = subprocess.run([sys.executable, __file__, socket_path, workspace],
                          capture_output=True, text=True, timeout=60)
    return dict(json.loads(done.stdout)["answers"]) if done.returncode == 0 else {"error": done.stderr}


def main(argv: list[str]) -> int:
    socket_path, workspace = argv[1], argv[2]
    approval = argv[3] if len(argv) > 3 else "a-1"
    checkpoint = argv[4] if len(argv) > 4 else "cp-000001"
    answers: dict[str, Any] = {}
    with Client(Path(socket_path), timeout=20) as client:
        client.initialize("intentd-gui 0.1")  # a claim the daemon must not believe
        for method in person_methods():
            try:
                client.call(method, params_for(method, workspace, approval, checkpoint))
                answers[method] = "ok"
            except RpcError as exc:
                answers[method] = exc.code
    text = json.dumps({"answers": answers, "ppid": os.getppid()})
    if os.environ.get("PROBE_OUT"):
        Path(os.environ["PROBE_OUT"]).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
