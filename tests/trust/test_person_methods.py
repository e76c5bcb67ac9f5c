"""Person methods from agent-side processes are refused and recorded; the person's still work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, write_policy
from tests.server.helpers import Background, wait_notification
from tests.trust.agent_side import (
    PROBE,
    answers_in,
    probe_command,
    refused,
    run_command,
    session,
    under_fake_agent,
    under_named_agent,
    wait_file,
)

PERSON_METHODS = [m for m, side in protocol.METHOD_SIDES.items() if side == protocol.PERSON]


def person(daemon: DaemonProcess) -> Client:
    client = Client(daemon.socket_path, timeout=30).connect()
    client.initialize("test-person")
    return client


def pending_write(daemon: DaemonProcess, ws: Path) -> tuple[Client, Background, str]:
    """Another session's write, waiting for a person: what a probe would love to approve."""
    agent, watcher = person(daemon), person(daemon)
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED]})
    waiting = Background(agent, protocol.TOOLS_CALL, {
        "session_id": session(agent, ws), "tool": "write_to_file",
        "args": {"path": "src/evil.py", "content": "evil"}})
    approval = wait_notification(watcher, protocol.APPROVALS_REQUESTED)["id"]
    watcher.close()
    return agent, waiting, str(approval)


def test_the_table_names_every_method_the_daemon_serves() -> None:
    served = {v for k, v in vars(protocol).items() if k.isupper() and isinstance(v, str)
              and "/" in v and v not in protocol.NOTIFICATIONS} | {protocol.INITIALIZE}
    assert served <= set(protocol.METHOD_SIDES), "classify every method in protocol.METHOD_SIDES"
    assert protocol.is_person_method("grants/add"), "a method not in the table is the person's"
    assert set(PERSON_METHODS) >= {protocol.APPROVALS_RESPOND, protocol.SETTINGS_UPDATE,
                                   protocol.CHECKPOINTS_RESTORE}


def test_an_auto_approved_command_is_refused_every_person_method(
        daemon: DaemonProcess, ws: Path) -> None:
    agent, waiting, approval = pending_write(daemon, ws)
    client = person(daemon)
    done = run_command(client, session(client, ws), probe_command(daemon.socket_path, ws, approval))
    assert done["approved_by"] == "auto"
    answers = answers_in(done["result"]["output"])["answers"]
    assert answers == {m: protocol.PERSON_ONLY for m in PERSON_METHODS}
    settings = client.call(protocol.SETTINGS_GET, {"workspace": str(ws)})
    assert settings["overrides"] == {"auto_approve": {}} and not settings["pending"]
    assert [a["id"] for a in client.call(protocol.APPROVALS_LIST)["approvals"]] == [approval]
    client.call(protocol.APPROVALS_RESPOND, {"approval_id": approval, "decision": "reject"})
    assert waiting.result()["decision"] == "deny"
    agent.close()


def test_a_command_a_person_approved_is_refused_too(daemon: DaemonProcess, ws: Path) -> None:
    write_policy(ws, {"auto_approve": {"all_commands": False, "safe_commands": False}})
    agent, watcher = person(daemon), person(daemon)
    watcher.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.APPROVALS_REQUESTED]})
    running = Background(agent, protocol.TOOLS_CALL, {
        "session_id": session(agent, ws), "tool": "execute_command",
        "args": {"command": probe_command(daemon.socket_path, ws)}})
    asked = wait_notification(watcher, protocol.APPROVALS_REQUESTED)
    watcher.call(protocol.APPROVALS_RESPOND, {"approval_id": asked["id"], "decision": "approve"})
    done = running.result(timeout=60)
    assert done["approved_by"] == "person"
    assert refused(answers_in(done["result"]["output"])["answers"]) == (len(PERSON_METHODS),) * 2


def test_a_double_forked_orphan_stays_the_daemons_and_is_refused(
        daemon: DaemonProcess, ws: Path) -> None:
    """setsid -f: the probe outlives the command; the daemon, a subreaper, becomes its parent."""
    out = ws / "src" / "probe.json"
    client = person(daemon)
    command = (f"PROBE_OUT={out} setsid -f sh -c 'sleep 0.5; exec "
               f"{probe_command(daemon.socket_path, ws)} >/dev/null 2>&1'")
    assert run_command(client, session(client, ws), command)["result"]["ok"]
    found = answers_in(wait_file(out))
    assert found["ppid"] == daemon.process.pid  # type: ignore[union-attr]
    assert refused(found["answers"]) == (len(PERSON_METHODS),) * 2


def test_a_process_under_an_agent_the_hook_named_is_refused(
        daemon: DaemonProcess, ws: Path) -> None:
    """A stand-in agent the name check does not know: before its hook runs, its children are
    the person's (which is why the hook names it); after, every person method is refused."""
    found = under_fake_agent(daemon.socket_path, ws)
    assert found["hook"]["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert protocol.PERSON_ONLY not in found["before"].values()
    assert refused(found["after"]) == (len(PERSON_METHODS),) * 2


def test_a_process_under_a_known_agent_program_is_refused(daemon: DaemonProcess, ws: Path) -> None:
    assert refused(under_named_agent(daemon.socket_path, ws)["answers"]) == \
        (len(PERSON_METHODS),) * 2


def test_a_process_in_an_agents_environment_is_refused(daemon: DaemonProcess, ws: Path) -> None:
    """What Claude Code's shell commands carry (CLAUDECODE=1), even far from any agent."""
    done = subprocess.run([sys.executable, str(PROBE), str(daemon.socket_path), str(ws)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CLAUDECODE": "1"})
    assert refused(answers_in(done.stdout)["answers"]) == (len(PERSON_METHODS),) * 2


def test_refusals_are_in_the_workspace_ledger(daemon: DaemonProcess, ws: Path) -> None:
    client = person(daemon)
    run_command(client, session(client, ws), probe_command(daemon.socket_path, ws))
    entries = client.call(protocol.LEDGER_QUERY, {"workspace": str(ws), "decision": "deny"})["entries"]
    trust = [e for e in entries if e["stage"] == "trust"]
    assert {e["intent"]["tool"] for e in trust} >= {protocol.SETTINGS_UPDATE,
                                                   protocol.CHECKPOINTS_RESTORE}
    assert "started by the daemon" in trust[0]["reason"]
    assert trust[0]["receipt"]["result"] == "not_run"


def test_the_person_side_and_the_cli_still_work(daemon: DaemonProcess, ws: Path) -> None:
    """The control: the same probe from the person's side is not refused, and `intentd
    approve` from the person's terminal answers a waiting call."""
    agent, waiting, approval = pending_write(daemon, ws)
    cli = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "approve", approval,
                          "--socket", str(daemon.socket_path)], capture_output=True, text=True,
                         timeout=30)
    assert cli.returncode == 0, cli.stderr
    assert waiting.result()["decision"] == "allow"
    agent.close()
    direct = subprocess.run([sys.executable, str(PROBE), str(daemon.socket_path), str(ws)],
                            capture_output=True, text=True, timeout=60)
    assert protocol.PERSON_ONLY not in answers_in(direct.stdout)["answers"].values()


@pytest.mark.parametrize("script_widens", [True, False])
def test_widening_from_a_script_waits_for_the_app(daemon: DaemonProcess, ws: Path,
                                                  script_widens: bool) -> None:
    write_policy(ws, {"auto_approve": {"edit": False, "read": True}})
    script, app = person(daemon), Client(daemon.socket_path, timeout=30).connect()
    app.initialize("intentd-gui 0.1")
    change = {"edit": True} if script_widens else {"read": False}
    answer = script.call(protocol.SETTINGS_UPDATE, {"workspace": str(ws), "auto_approve": change})
    if not script_widens:  # narrowing: at once
        assert answer["policy"]["auto_approve"]["read"] is False and "queued" not in answer
        return
    assert answer["policy"]["auto_approve"]["edit"] is False
    queued = answer["queued"]
    assert queued["auto_approve"] == {"edit": True}
    confirm = {"workspace": str(ws), "confirmation_id": queued["id"], "decision": "approve"}
    with pytest.raises(Exception) as caught:
        script.call(protocol.SETTINGS_CONFIRM, confirm)
    assert getattr(caught.value, "code", None) == protocol.PERSON_ONLY
    confirmed = app.call(protocol.SETTINGS_CONFIRM, confirm)
    assert confirmed["policy"]["auto_approve"]["edit"] is True and not confirmed["pending"]
