"""The process on the other end of a Unix socket, as the kernel reports it (SO_PEERCRED)."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class PeerCredentials:
    pid: int   # 0 when the kernel cannot name it (another pid namespace)
    uid: int
    gid: int


def peer_credentials(sock: socket.socket) -> PeerCredentials | None:
    """Who was on the other end when the connection was made; None where the OS cannot say."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None  # not Linux: callers treat an unknown peer as untrusted
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    pid, uid, gid = struct.unpack("3i", raw)
    return PeerCredentials(int(pid), int(uid), int(gid))
