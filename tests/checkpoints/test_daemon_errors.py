"""Checkpoints over the socket: errors carry CHECKPOINT_ERROR; the list says what the watcher sees."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace
from intentd.daemon.utils.statedir import checkpoints_dir


@pytest.mark.parametrize("damage", [b"this is not a database" * 100,
                                    b"SQLite format 3\0" + b"\xff" * 4000])
def test_a_corrupt_manifest_is_a_checkpoint_error(short_dir: Path, damage: bytes) -> None:
    """-32004 (not -32603) for every checkpoint method, restore too (a person method, asked for
    here from the person's side), and nothing changed: not the workspace, not the store."""
    workspace = make_workspace(short_dir / "ws", files={"src/app.py": "x = 1\n"})
    state = short_dir / "state"
    store = checkpoints_dir(workspace.resolve(), state / "intentd")
    store.mkdir(parents=True, mode=0o700)
    (store / "manifest.sqlite3").write_bytes(damage)
    with DaemonProcess(short_dir / "d.sock", state) as daemon, Client(daemon.socket_path) as client:
        client.initialize("test")
        for method, params in ((protocol.CHECKPOINTS_LIST, {}),
                               (protocol.CHECKPOINTS_DIFF, {"checkpoint_id": "cp-1"}),
                               (protocol.CHECKPOINTS_RESTORE, {"checkpoint_id": "cp-000001"})):
            with pytest.raises(RpcError) as caught:
                client.call(method, {"workspace": str(workspace), **params})
            assert caught.value.code == protocol.CHECKPOINT_ERROR, caught.value
            assert "manifest" in caught.value.message and "move the folder" in caught.value.message
    assert (workspace / "src" / "app.py").read_text() == "x = 1\n"
    assert (store / "manifest.sqlite3").read_bytes() == damage, "the damaged store is left as it was"


def test_the_list_says_what_the_watcher_sees(short_dir: Path) -> None:
    workspace = make_workspace(short_dir / "ws", files={"src/app.py": "x = 1\n"})
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as daemon, \
            Client(daemon.socket_path) as client:
        client.initialize("test")
        listed = client.call(protocol.CHECKPOINTS_LIST, {"workspace": str(workspace)})
    assert listed["coverage"]["mode"] == "watched" and listed["coverage"]["unwatched_count"] == 0
    assert listed["coverage"]["summary"].startswith("watching all")


def warm_up_phases(client: Client) -> list[str]:
    """The checkpoints/progress phases the client is told, until `done` (20 s at most)."""
    deadline = time.monotonic() + 20
    phases: list[str] = []
    while "done" not in phases and time.monotonic() < deadline:
        message = client.next_notification(timeout=deadline - time.monotonic())
        if message is not None:
            phases.append(message["params"]["phase"])
    return phases


def test_a_folder_warms_up_only_once_a_person_makes_it_a_workspace(short_dir: Path) -> None:
    """Any client may ask `intents/list` of any folder (`/`, say): that must not read and hold
    a checkpoint baseline of it. A folder `intentd init` made a workspace warms up when a
    session opens on it."""
    folder = short_dir / "plain"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("x = 1\n")
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as daemon, \
            Client(daemon.socket_path) as client:
        client.initialize("test")
        client.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.CHECKPOINTS_PROGRESS]})
        assert client.call(protocol.INTENTS_LIST, {"workspace": str(folder)})["intents"] == []
        assert client.next_notification(timeout=2) is None, "no warm-up of a plain folder"
        make_workspace(folder)  # what `intentd init` and an intent give it
        client.call(protocol.SESSIONS_OPEN, {"workspace": str(folder), "agent": "agent"})
        phases = warm_up_phases(client)
        assert phases[-1:] == ["done"]


def test_a_workspace_warms_up_when_the_daemon_opens_it(short_dir: Path) -> None:
    """Its baseline is taken in the background, with progress, and never listed; the first
    command then only looks at what changed: no full scan in the call."""
    workspace = make_workspace(short_dir / "ws", make_intent(owned_scope=["**"]),
                               policy={"auto_approve": {"all_commands": True}},
                               files={"src/app.py": "x = 1\n"})
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as daemon, \
            Client(daemon.socket_path) as client:
        client.initialize("test")
        client.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.CHECKPOINTS_PROGRESS]})
        session_id = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace),
                                                          "agent": "agent"})["session_id"]
        phases = warm_up_phases(client)
        assert phases[-2:] == ["reading", "done"]
        listing = {"workspace": str(workspace)}
        assert client.call(protocol.CHECKPOINTS_LIST, listing)["checkpoints"] == []
        client.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
        answer = client.call(protocol.TOOLS_AUTHORIZE, {"session_id": session_id,
                                                        "tool": "execute_command",
                                                        "args": {"command": "touch src/new.py"}})
        assert answer["decision"] == "allow"
        (first,) = client.call(protocol.CHECKPOINTS_LIST, listing)["checkpoints"]
    assert first["id"] == answer["checkpoint_id"] and first["coverage"] == ""
