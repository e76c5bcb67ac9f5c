"""A caller that connects, hands its connection to a child and exits, while its pid goes to a
process of the person's: the daemon must not judge the connection by that process."""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.server.server import _caller
from intentd.daemon.testing import DaemonProcess
from intentd.daemon.trust.peer import SO_PEERPIDFD, has_exited, peer_pidfd
from tests.trust.agent_side import wait_file

NS_LAST_PID = Path("/proc/sys/kernel/ns_last_pid")

# Agent-side (CLAUDECODE=1): connect, fork a child that keeps the connection, print our pid and
# exit. The child waits for OUT/go, tries a person method, and writes what it got to OUT/answer.
HANDOFF = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from intentd.daemon.client import Client, RpcError
    socket_path, workspace, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    client = Client(socket_path, timeout=30).connect()
    if os.fork():
        (out / "pid").write_text(str(os.getpid()))
        os._exit(0)
    while not (out / "go").exists():
        time.sleep(0.02)
    try:
        client.initialize("intentd-gui 0.1")
        client.call("settings/update", {"workspace": workspace, "auto_approve": {"read": False}})
        answer = "ok"
    except RpcError as exc:
        answer = str(exc.code)
    (out / "answer").write_text(answer)
""")


def take_pid(pid: int, tries: int = 200) -> subprocess.Popen[bytes] | None:
    """A process of ours (the person's side) that gets `pid`, by steering the next pid."""
    for _ in range(tries):
        NS_LAST_PID.write_text(str(pid - 1))
        child = subprocess.Popen(["sleep", "60"], env={"PATH": os.environ["PATH"]})
        if child.pid == pid:
            return child
        child.kill()
        child.wait()
    return None


def kernel_has_pidfds() -> bool:
    left, right = socket.socketpair()
    with left, right:
        fd = peer_pidfd(left)
        if fd is not None:
            os.close(fd)
        return fd is not None


@pytest.mark.skipif(os.geteuid() != 0 or not os.access(NS_LAST_PID, os.W_OK)
                    or not kernel_has_pidfds(),
                    reason="steering the next pid needs root; the check needs SO_PEERPIDFD (Linux 6.5)")
def test_a_reused_pid_never_lends_its_side_to_a_handed_over_connection(
        daemon: DaemonProcess, ws: Path, short_dir: Path) -> None:
    assert daemon.process is not None
    out = short_dir / "handoff"
    out.mkdir()
    daemon.process.send_signal(signal.SIGSTOP)  # the connect waits in the listen queue
    reuser = None
    try:
        subprocess.run([sys.executable, "-c", HANDOFF, str(daemon.socket_path), str(ws), str(out)],
                       env={**os.environ, "CLAUDECODE": "1"}, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=True)
        gone = int(wait_file(out / "pid"))
        reuser = take_pid(gone)
        if reuser is None:
            pytest.skip(f"pid {gone} was taken by another process first")
    finally:
        daemon.process.send_signal(signal.SIGCONT)
    try:
        time.sleep(0.3)  # the daemon accepts the waiting connection and reads its caller
        (out / "go").touch()
        assert wait_file(out / "answer") == str(protocol.PERSON_ONLY)
    finally:
        reuser.kill()
        reuser.wait()


@pytest.mark.parametrize("errno_code, vouched", [(errno.EMFILE, False), (errno.ENFILE, False),
                                                 (errno.ENOPROTOOPT, True)])
def test_a_pidfd_that_cannot_be_had_leaves_the_caller_unvouched_for(
        monkeypatch: pytest.MonkeyPatch, errno_code: int, vouched: bool) -> None:
    """Out of descriptors (an agent can open enough connections for that) is no old kernel:
    the caller gets no side, so person methods are refused; a kernel with no SO_PEERPIDFD
    reads the ancestry as before."""
    real = socket.socket.getsockopt

    def getsockopt(sock: socket.socket, level: int, option: int, *rest: int) -> object:
        if (level, option) == (socket.SOL_SOCKET, SO_PEERPIDFD):
            raise OSError(errno_code, os.strerror(errno_code))
        return real(sock, level, option, *rest)

    monkeypatch.setattr(socket.socket, "getsockopt", getsockopt)
    left, right = socket.socketpair()
    with left, right:
        chain = _caller(left, os.getpid())
    assert (chain is not None) is vouched
    if chain is not None:
        assert chain[0].pid == os.getpid()


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not kernel_has_pidfds(), reason="needs SO_PEERPIDFD (Linux 6.5)")
def test_where_proc_cannot_be_read_a_pidfd_is_still_known_and_none_is_lost(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without /proc the daemon once failed to recognise the pidfd it was given, and neither
    used nor closed it: an agent connecting in a loop ran the daemon out of descriptors."""
    def no_proc(path: object, *args: object, **kwargs: object) -> str:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))

    before = open_descriptors()
    left, right = socket.socketpair()
    with left, right:
        monkeypatch.setattr(os, "readlink", no_proc)
        fds = [peer_pidfd(left) for _ in range(50)]
        monkeypatch.undo()
        assert all(fd is not None and not has_exited(fd) for fd in fds)
        for fd in fds:
            assert fd is not None
            os.close(fd)
    assert open_descriptors() == before


@pytest.mark.parametrize("proc_readable", [True, False])
def test_a_number_that_is_no_pidfd_is_neither_trusted_nor_closed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, proc_readable: bool) -> None:
    """Where option 77 is something else, its value may be the number of one of our own
    descriptors: it is not taken for the caller's process, and left open."""
    mine = os.open(tmp_path / "mine", os.O_RDWR | os.O_CREAT)
    real = socket.socket.getsockopt

    def getsockopt(sock: socket.socket, level: int, option: int, *rest: int) -> object:
        if (level, option) == (socket.SOL_SOCKET, SO_PEERPIDFD):
            return mine
        return real(sock, level, option, *rest)

    def no_proc(path: object, *args: object, **kwargs: object) -> str:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))

    monkeypatch.setattr(socket.socket, "getsockopt", getsockopt)
    if not proc_readable:
        monkeypatch.setattr(os, "readlink", no_proc)
    left, right = socket.socketpair()
    with left, right:
        assert peer_pidfd(left) is None
    monkeypatch.undo()
    assert os.write(mine, b"still open") == 10
    os.close(mine)
