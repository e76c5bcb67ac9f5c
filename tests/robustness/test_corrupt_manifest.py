"""A damaged checkpoint manifest is the documented checkpoint error for every checkpoint method."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client, RpcError
from intentd.daemon.testing import DaemonProcess, make_workspace
from intentd.daemon.utils.statedir import checkpoints_dir


@pytest.mark.parametrize("damage", [b"this is not a database" * 100,
                                    b"SQLite format 3\0" + b"\xff" * 4000])
def test_restore_from_a_damaged_manifest_is_a_checkpoint_error(short_dir: Path,
                                                               damage: bytes) -> None:
    """The red team's finding was -32603 on checkpoints/list; restore (a person method, asked
    for here from the person's side) must answer -32004 too, and change nothing."""
    workspace = make_workspace(short_dir / "ws", files={"src/app.py": "x = 1\n"})
    state = short_dir / "state"
    store = checkpoints_dir(workspace.resolve(), state / "intentd")
    store.mkdir(parents=True, mode=0o700)
    (store / "manifest.sqlite3").write_bytes(damage)
    with DaemonProcess(short_dir / "d.sock", state) as daemon, Client(daemon.socket_path) as client:
        client.initialize("test")
        for method, params in ((protocol.CHECKPOINTS_LIST, {}),
                               (protocol.CHECKPOINTS_RESTORE, {"checkpoint_id": "cp-000001"})):
            with pytest.raises(RpcError) as caught:
                client.call(method, {"workspace": str(workspace), **params})
            assert caught.value.code == protocol.CHECKPOINT_ERROR, caught.value
            assert "manifest" in caught.value.message and "move the folder" in caught.value.message
    assert (workspace / "src" / "app.py").read_text() == "x = 1\n"
    assert (store / "manifest.sqlite3").read_bytes() == damage, "the damaged store is left as it was"
