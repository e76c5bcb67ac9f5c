"""A stop is not held up by a client that hung up: nobody is left to take its answers."""

from __future__ import annotations

import fcntl
import socket
import struct
import termios
import time
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.server.connection import MAX_QUEUED_MESSAGES
from intentd.daemon.testing import DaemonProcess

GRACE = 2.0  # what a stop gives a connected client to take the answers under way (server.stop)
# Far more answers than a socket holds, but not so many that the daemon drops the client first.
REQUESTS = MAX_QUEUED_MESSAGES * 9 // 10


def unread_bytes(sock: socket.socket) -> int:
    return int(struct.unpack("i", fcntl.ioctl(sock, termios.FIONREAD, b"\0" * 4))[0])


def wait_until_full(sock: socket.socket, settle: float = 0.5, timeout: float = 20) -> int:
    """The bytes waiting in `sock` (which never reads) once the daemon has stopped sending."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now = unread_bytes(sock)
        if now != last:
            last, since = now, time.monotonic()
        elif now > 0 and time.monotonic() - since >= settle:
            return now
        time.sleep(0.05)
    raise AssertionError("the daemon never stopped sending")


def refuses(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX)
    try:
        probe.connect(str(path))
        return False
    except OSError:
        return True
    finally:
        probe.close()


def test_a_client_that_hangs_up_during_a_stop_does_not_hold_it_up(short_dir: Path) -> None:
    with DaemonProcess(short_dir / "d.sock", short_dir / "state") as daemon, \
            socket.socket(socket.AF_UNIX) as client:
        assert daemon.process is not None
        client.connect(str(daemon.socket_path))
        client.sendall(b"".join(protocol.encode(protocol.request(protocol.APPROVALS_LIST, {}, n))
                                for n in range(REQUESTS)))
        answers = sum(len(protocol.encode({"jsonrpc": "2.0", "id": n, "result": {
            "approvals": [], "approvers": 0}})) for n in range(REQUESTS))
        # Most answers still wait in the daemon for this client to read them.
        assert wait_until_full(client) < answers / 2
        daemon.process.terminate()
        deadline = time.monotonic() + 10
        while not refuses(daemon.socket_path):  # the stop is under way, waiting for the client
            assert time.monotonic() < deadline
            time.sleep(0.01)
        client.close()
        hung_up = time.monotonic()
        assert daemon.process.wait(10) == 0
        waited = time.monotonic() - hung_up
        assert waited < GRACE / 2, f"the stop went on {waited:.2f} s after the client hung up"
