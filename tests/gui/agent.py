"""A stand-in agent for the GUI tests, run as a subprocess: opens a session, selects INT-1, and
makes calls that wait for a person. Prints one JSON line per answer to stdout.

    python tests/gui/agent.py SOCKET WORKSPACE [--count N] [--path P] [--content TEXT] [--batch B]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("socket")
    parser.add_argument("workspace")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--path", default="src/x.py")
    parser.add_argument("--content", default="def answer() -> int:\n    return 42\n")
    parser.add_argument("--batch", default=None)
    args = parser.parse_args()
    with Client(args.socket, timeout=None) as client:
        client.initialize("gui-test-agent")
        session = client.call(protocol.SESSIONS_OPEN, {"workspace": args.workspace,
                                                       "agent": "test-agent"})["session_id"]
        client.call(protocol.TOOLS_CALL, {"session_id": session, "tool": "select_active_intent",
                                          "args": {"intent_id": "INT-1"}})
        for n in range(args.count):
            path = args.path if args.count == 1 else args.path.replace(".py", f"_{n}.py")
            if (Path(args.workspace) / path).exists():  # the stale-file check wants a read first
                client.call(protocol.TOOLS_CALL, {"session_id": session, "tool": "read_file",
                                                  "args": {"path": path}})
        # Send every call before reading any answer: they all wait for a person at once.
        ids = []
        for n in range(args.count):
            path = args.path if args.count == 1 else args.path.replace(".py", f"_{n}.py")
            params = {"session_id": session, "tool": "write_to_file",
                      "args": {"path": path, "content": args.content}}
            if args.batch:
                params["batch"] = args.batch
            ids.append(n + 1000)
            client.send(protocol.request(protocol.TOOLS_CALL, params, n + 1000))
        print(json.dumps({"ready": session}), flush=True)
        answered = 0
        while answered < len(ids):
            message = client.read_message(None)
            if message.get("id") in ids:
                answered += 1
                print(json.dumps(message.get("result") or {"error": message.get("error")}),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
