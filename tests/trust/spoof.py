"""Planted sockets: another user's folder, an open folder, another user's socket or server."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PLANTED = Path(__file__).with_name("planted_daemon.py")
OTHER_UID = 65534  # nobody


@dataclass
class Planted:
    socket_path: Path
    record: Path
    process: subprocess.Popen[str]

    def bytes_received(self) -> int:
        if not self.record.exists():
            return 0
        return sum(int(n) for n in self.record.read_text().split())

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def plant(folder: Path, *, folder_uid: int | None = None, folder_mode: int = 0o700,
          socket_uid: int | None = None, server_uid: int | None = None) -> Planted:
    """A stand-in daemon at folder/intentd.sock, the folder and socket owned and opened as asked."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    record = folder.parent / f"{folder.name}.record"
    record.touch()
    os.chmod(record, 0o666)  # a server that dropped to another uid still writes it
    path = folder / "intentd.sock"
    command = [sys.executable, str(PLANTED), str(path), str(record)]
    if server_uid is not None:
        os.chmod(folder, 0o777)  # to bind as root then listen as nobody; closed again below
        command.append(str(server_uid))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    os.chmod(folder, folder_mode)
    if socket_uid is not None:
        os.chown(path, socket_uid, -1)
    if folder_uid is not None:
        os.chown(folder, folder_uid, -1)
    return Planted(path, record, process)


def scenarios(root: Path) -> dict[str, dict[str, int | None]]:
    """name -> plant() keywords; those needing another uid only when we may chown (root)."""
    found: dict[str, dict[str, int | None]] = {"folder open to others": {"folder_mode": 0o755}}
    if os.getuid() == 0:
        found.update({
            "folder of another user": {"folder_uid": OTHER_UID},
            "socket of another user": {"socket_uid": OTHER_UID},
            "server of another user": {"server_uid": OTHER_UID},
        })
    return found  # type: ignore[return-value]
