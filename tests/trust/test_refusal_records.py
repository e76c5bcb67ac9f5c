"""A refused person method is in the ledger of the workspace it aimed at, even when the request
names that workspace only through a grant or a grant request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, write_policy
from tests.server.helpers import Background, open_session, wait_notification

# Run with an agent's environment mark: what Claude Code's own shell commands carry.
AGENT_SCRIPT = """
import json, sys
from intentd.daemon.client import Client, RpcError
socket_path, calls = sys.argv[1], json.loads(sys.argv[2])
codes = []
with Client(socket_path, timeout=20) as client:
    client.initialize("intentd-gui 0.1")
    for method, params in calls:
        try:
            client.call(method, params)
            codes.append("ok")
        except RpcError as exc:
            codes.append(exc.code)
print(json.dumps(codes))
"""


def grant_by(client: Client, agent: Client, app: Client, session_id: str,
             command: str, lifetime: str) -> dict[str, Any]:
    """A command waiting for a person, approved by `client` with a grant: what it answered."""
    call = Background(agent, protocol.TOOLS_CALL, {"session_id": session_id,
                                                   "tool": "execute_command",
                                                   "args": {"command": command}})
    request = wait_notification(app, protocol.APPROVALS_REQUESTED)
    answer: dict[str, Any] = client.call(protocol.APPROVALS_RESPOND, {
        "approval_id": request["id"], "decision": "approve",
        "grant": {"lifetime": lifetime, "shape": "command"}})["grant"]
    assert call.result()["decision"] == "allow"
    return answer


def test_refused_grant_methods_are_recorded_by_the_grants_workspace(
        daemon: DaemonProcess, ws: Path) -> None:
    write_policy(ws, {"auto_approve": {"all_commands": False, "safe_commands": False}})
    app = Client(daemon.socket_path, timeout=30).connect()
    app.initialize("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    cli = Client(daemon.socket_path, timeout=30).connect()
    cli.initialize("intentd-cli")
    agent = Client(daemon.socket_path, timeout=30).connect()
    session_id = open_session(agent, ws)
    queued = grant_by(cli, agent, app, session_id, "touch src/a", "session")["queued"]
    added = grant_by(app, agent, app, session_id, "mkdir -p src/b", "workspace")["added"]
    calls = [(protocol.GRANTS_CONFIRM, {"request_id": queued["id"], "decision": "approve"}),
             (protocol.GRANTS_REVOKE, {"grant_id": added["id"]})]
    done = subprocess.run([sys.executable, "-c", AGENT_SCRIPT, str(daemon.socket_path),
                           json.dumps(calls)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CLAUDECODE": "1"})
    assert json.loads(done.stdout) == [protocol.PERSON_ONLY] * 2, done.stderr
    listed = app.call(protocol.GRANTS_LIST, {"workspace": str(ws)})
    assert [g["id"] for g in listed["grants"]] == [added["id"]], "nothing was revoked"
    assert [r["id"] for r in listed["requests"]] == [queued["id"]], "nothing was confirmed"
    entries = app.call(protocol.LEDGER_QUERY, {"workspace": str(ws), "decision": "deny"})["entries"]
    trust = {e["intent"]["tool"]: e for e in entries if e["stage"] == "trust"}
    assert set(trust) == {protocol.GRANTS_CONFIRM, protocol.GRANTS_REVOKE}, \
        "each refusal is in the ledger of the grant's workspace"
    assert "CLAUDECODE" in trust[protocol.GRANTS_REVOKE]["reason"]
    for client in (app, cli, agent):
        client.close()
