"""An edit a person approves from its diff writes over the file that diff was made from, or
not at all: the agent may change the file while the person looks (and read it again, so that
no stale-file check stops it), on a real daemon."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client
from tests.server.helpers import Background, open_session, wait_notification

Connect = Callable[[str], Client]
PERSONS = "".join(f"line_{i} = {i}  # the person's work\n" for i in range(40))


def person(connect: Connect) -> Client:
    app = connect("intentd-gui test")
    app.call(protocol.EVENTS_SUBSCRIBE, {"approver": True})
    return app


def call(agent: Client, session_id: str, tool: str, method: str = protocol.TOOLS_CALL,
         **args: Any) -> Background:
    return Background(agent, method, {"session_id": session_id, "tool": tool, "args": args})


def read(agent: Client, session_id: str, path: str) -> None:
    answer = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "read_file",
                                              "args": {"path": path}})
    assert answer["decision"] == "allow"


def approve_shown(app: Client) -> tuple[str, str]:
    """What the person is shown of the call that waits: its diff, and its approval id."""
    request = wait_notification(app, protocol.APPROVALS_REQUESTED)
    shown = app.call(protocol.APPROVALS_LIST)["approvals"][0]["diff"]
    return str(shown), request["id"]


def test_a_file_hidden_while_the_person_looks_is_not_overwritten(connect: Connect,
                                                                 workspace: Path) -> None:
    """The person is shown a new one-line file; the 40 lines put back meanwhile stay."""
    app, agent = person(connect), connect("agent")
    session_id = open_session(agent, workspace)
    target = workspace / "src" / "settings.py"
    target.write_text(PERSONS)
    read(agent, session_id, "src/settings.py")
    os.rename(target, workspace / "src" / ".aside")
    pending = call(agent, session_id, "write_to_file", path="src/settings.py", content="x = 1\n")
    shown, approval_id = approve_shown(app)
    assert "--- a/src/settings.py" in shown and "\n-line_0" not in shown, "shown as a new file"
    os.rename(workspace / "src" / ".aside", target)
    app.call(protocol.APPROVALS_RESPOND, {"approval_id": approval_id, "decision": "approve"})
    answer = pending.result()
    assert (answer["decision"], answer["stage"]) == ("deny", "stale_file")
    assert "changed after the person was shown the diff" in answer["reason"]
    assert target.read_text() == PERSONS


def test_an_edit_applies_the_diff_shown_or_nothing(connect: Connect, workspace: Path) -> None:
    """Shown `VERBOSE = True → False` on a decoy; on the real file the same edit would also have
    turned CHECK_AUTH off. Sent again, the person sees the real diff, and that one applies."""
    app, agent, shell = person(connect), connect("agent"), connect("agent's shell")
    session_id = open_session(agent, workspace)
    target = workspace / "src" / "auth.py"
    real = "VERBOSE = False\nCHECK_AUTH = True\n"
    target.write_text("VERBOSE = True\nCHECK_AUTH = on\n")  # the decoy
    read(agent, session_id, "src/auth.py")
    pending = call(agent, session_id, "replace_in_file", path="src/auth.py", old_str="True",
                   new_str="False")
    shown, approval_id = approve_shown(app)
    assert "-VERBOSE = True\n+VERBOSE = False\n" in shown
    assert "-CHECK_AUTH" not in shown and "+CHECK_AUTH" not in shown
    target.write_text(real)
    read(shell, session_id, "src/auth.py")  # what the stale-file check asks for: it has no say
    app.call(protocol.APPROVALS_RESPOND, {"approval_id": approval_id, "decision": "approve"})
    answer = pending.result()
    assert (answer["decision"], answer["stage"]) == ("deny", "stale_file")
    assert target.read_text() == real

    again = call(agent, session_id, "replace_in_file", path="src/auth.py", old_str="CHECK_AUTH = True",
                 new_str="CHECK_AUTH = True  # kept")
    shown, approval_id = approve_shown(app)
    assert "+CHECK_AUTH = True  # kept" in shown
    app.call(protocol.APPROVALS_RESPOND, {"approval_id": approval_id, "decision": "approve"})
    assert again.result()["decision"] == "allow"
    assert target.read_text() == "VERBOSE = False\nCHECK_AUTH = True  # kept\n"


def test_a_hook_agent_is_not_authorized_over_a_file_changed_after_the_diff(
        connect: Connect, workspace: Path) -> None:
    """A hook agent writes the file itself: the authorization it waits for is refused."""
    app, agent, shell = person(connect), connect("hook"), connect("agent's shell")
    session_id = open_session(agent, workspace)
    target = workspace / "src" / "settings.py"
    target.write_text("small = 1\n")
    read(agent, session_id, "src/settings.py")
    pending = call(agent, session_id, "write_to_file", method=protocol.TOOLS_AUTHORIZE,
                   path="src/settings.py", content="small = 2\n")
    shown, approval_id = approve_shown(app)
    assert "-small = 1\n+small = 2\n" in shown
    target.write_text(PERSONS)
    read(shell, session_id, "src/settings.py")
    app.call(protocol.APPROVALS_RESPOND, {"approval_id": approval_id, "decision": "approve"})
    answer = pending.result()
    assert (answer["decision"], answer["stage"]) == ("deny", "stale_file")
    assert "changed after the person was shown the diff" in answer["reason"]
    assert answer["checkpoint_id"] is None, "refused before its checkpoint: nothing to run"
