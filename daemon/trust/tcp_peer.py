"""The user owning the other end of a loopback TCP connection, as the kernel reports it.

A Unix socket names its peer (SO_PEERCRED); TCP does not. On loopback both ends live in this
network namespace, so the kernel's socket diagnostics (NETLINK_SOCK_DIAG, what `ss` uses) can
look up the peer's own socket by its four-tuple and say which uid made it. One exact lookup
takes some 20 µs; /proc/net/tcp would walk the whole table (milliseconds).
"""

from __future__ import annotations

import socket
import struct

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
NO_COOKIE = 0xFFFFFFFF          # INET_DIAG_NOCOOKIE: find the socket by its addresses alone
ALL_STATES = 0xFFFFFFFF
NLMSG_HEADER = struct.Struct("=IHHII")
DIAG_REQUEST = struct.Struct("=BBBBI")   # family, protocol, ext, pad, states
SOCKID_BYTES = 48                        # ports, two 16-byte addresses, interface, cookie
UID_OFFSET = NLMSG_HEADER.size + 4 + SOCKID_BYTES + 12  # after expires, rqueue, wqueue
LOOKUP_TIMEOUT = 1.0


def _packed(family: int, address: str) -> bytes:
    """An address as inet_diag_sockid holds it: 16 bytes, IPv4 in the first four."""
    if family == socket.AF_INET:
        return socket.inet_aton(address) + bytes(12)
    return socket.inet_pton(socket.AF_INET6, address.split("%")[0])


def request(family: int, peer: tuple[str, int], mine: tuple[str, int]) -> bytes:
    """A SOCK_DIAG_BY_FAMILY lookup of the peer's socket: its end is `peer`, its remote `mine`."""
    sockid = (struct.pack("!HH", peer[1], mine[1]) + _packed(family, peer[0])
              + _packed(family, mine[0]) + struct.pack("=III", 0, NO_COOKIE, NO_COOKIE))
    body = DIAG_REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, ALL_STATES) + sockid
    return NLMSG_HEADER.pack(NLMSG_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY,
                             NLM_F_REQUEST, 1, 0) + body


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process that opened the peer's end of `sock`; None when the kernel cannot
    say (no netlink, not Linux, the peer already gone): callers refuse such a peer."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or not hasattr(socket, "AF_NETLINK"):
        return None
    try:
        peer, mine = sock.getpeername()[:2], sock.getsockname()[:2]
        query = request(sock.family, peer, mine)
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as link:
            link.settimeout(LOOKUP_TIMEOUT)
            link.send(query)
            answer = link.recv(8192)
    except (OSError, ValueError):
        return None
    if len(answer) < UID_OFFSET + 4:
        return None
    kind = struct.unpack_from("=H", answer, 4)[0]
    if kind != SOCK_DIAG_BY_FAMILY:  # NLMSG_ERROR: no such socket
        return None
    uid: int = struct.unpack_from("=I", answer, UID_OFFSET)[0]
    return uid


def listener_uid(port: int, host: str = "127.0.0.1", timeout: float = 1.0) -> int | None:
    """The uid of whoever listens on host:port (an accepted socket keeps its listener's uid);
    None when nothing listens there, or the kernel cannot say. Nothing is sent."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as probe:
            return peer_uid(probe)
    except OSError:
        return None
