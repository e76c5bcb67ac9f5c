"""An agent's command that opens connections to the daemon without end: it opens `count`, sends
one request on each, and prints how many were served and how many refused (JSON), then holds
them open until its stdin closes."""

from __future__ import annotations

import json
import socket
import sys

REQUEST = b'{"jsonrpc": "2.0", "id": 1, "method": "no/such/method", "params": {}}\n'


def main(path: str, count: int) -> None:
    socks = []
    for _ in range(count):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        sock.settimeout(30)
        socks.append(sock)
    served = refused = 0
    for sock in socks:
        try:
            sock.sendall(REQUEST)
        except OSError:
            pass  # closed by the daemon already: its answer is waiting below
        answer = sock.makefile("rb").readline()
        if b"too many connections" in answer:
            refused += 1
        elif b"-32601" in answer:
            served += 1
    print(json.dumps({"served": served, "refused": refused}), flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
