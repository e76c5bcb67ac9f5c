"""The process on the other end of a Unix socket, as the kernel reports it (SO_PEERCRED)."""

from __future__ import annotations

import errno
import os
import select
import signal
import socket
import struct
from dataclasses import dataclass

_NO_OPTION = (errno.ENOPROTOOPT, errno.EINVAL, errno.EOPNOTSUPP)
# SO_PEERPIDFD (Linux 6.5+): 77 in asm-generic, which x86, arm and riscv use. Python 3.11 has
# no name for it. What comes back is checked to be a pidfd before it is trusted as one.
SO_PEERPIDFD = 77


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


def peer_pidfd(sock: socket.socket) -> int | None:
    """A pidfd for the process that connected: it names that process for good, whatever
    later takes its pid. None where the kernel has none (before Linux 6.5). Any other failure
    raises OSError: out of file descriptors, say, which an agent can bring about, must not
    pass for an old kernel."""
    try:
        fd = sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
    except OSError as exc:
        if exc.errno in _NO_OPTION:
            return None
        raise
    # not a pidfd: another option under that number on this machine, not a descriptor of ours
    return fd if fd >= 0 and _is_pidfd(fd) else None


def _is_pidfd(fd: int) -> bool:
    """What /proc says the descriptor is; where /proc cannot say (not mounted, say), whether it
    takes signal 0 as only a pidfd (or a /proc folder's) does. Without that second check a real
    pidfd went unrecognised, unused and unclosed: one descriptor lost per connection."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[pidfd]"
    except OSError:
        pass
    try:
        signal.pidfd_send_signal(fd, 0)
    except (ProcessLookupError, PermissionError):
        return True  # a pidfd whose process has exited, or may not be signalled: a pidfd still
    except OSError:
        return False  # EBADF: not open, or not a pidfd
    return True


def has_exited(pidfd: int) -> bool:
    """Whether the process a pidfd names has exited (a pidfd turns readable then)."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(0))
