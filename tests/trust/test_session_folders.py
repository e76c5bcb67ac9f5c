"""A session opens only on a folder a person made a workspace: a session's folder is where its
paths count as inside, so one on a workspace's sub-folder, `/` or any plain folder would read
what the person's ignore rules hide, and outside files, as inside. On a real daemon."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError
from intentd.daemon.testing import make_workspace

Connect = Callable[[str], Client]


def open_on(agent: Client, folder: Path | str) -> str:
    opened = agent.call(protocol.SESSIONS_OPEN, {"workspace": str(folder), "agent": "agent"})
    return str(opened["session_id"])


def test_a_session_opens_on_a_workspace_and_nowhere_else(connect: Connect, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", files={"src/config/secret.pem": "KEY\n",
                                                ".orchestration/ignore": "src/config/\n"})
    (tmp_path / "plain").mkdir()
    agent = connect("agent")
    for folder, says in ((ws / "src", f"is inside the workspace {ws}"),
                         (ws / "src" / "config", f"open the session on {ws}"),
                         ("/", "is not an intentd workspace"),
                         (tmp_path / "plain", "`intentd init`")):
        with pytest.raises(RpcError) as refused:
            open_on(agent, folder)
        assert refused.value.code == protocol.UNKNOWN_WORKSPACE and says in refused.value.message
    session_id = open_on(agent, ws)
    read = agent.call(protocol.TOOLS_CALL, {"session_id": session_id, "tool": "read_file",
                                            "args": {"path": "src/config/secret.pem"}})
    assert (read["decision"], read["stage"]) == ("deny", "access")
    assert agent.call(protocol.SESSIONS_LIST)["sessions"][0]["workspace"] == str(ws)


def test_a_symlink_named_orchestration_does_not_make_a_workspace(connect: Connect,
                                                                 tmp_path: Path) -> None:
    """The agent may write a symlink anywhere it may write; `.orchestration` must be a folder."""
    ws = make_workspace(tmp_path / "ws")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".orchestration").symlink_to(ws / ".orchestration")
    with pytest.raises(RpcError, match="not an intentd workspace"):
        open_on(connect("agent"), tmp_path / "home")
