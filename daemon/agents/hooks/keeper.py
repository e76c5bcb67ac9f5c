"""The keeper: a background process holding one daemon session open for one agent session."""

# Started by the hook on first use (`start_keeper`); it opens the session, replays the selected
# intent, prints the session id on its stdout for the hook, and then only waits. It exits when
# the daemon goes away, when its state file is gone or names another session, or when the
# agent has been idle for IDLE_LIMIT seconds.

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client, DaemonUnavailable, RpcError

IDLE_LIMIT = 4 * 3600.0
POLL_SECONDS = 15.0
START_TIMEOUT = 15.0


class KeeperFailed(Exception):
    """The keeper could not open a session; the message says why."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out  # no answer in time (rather than an error it reported)


def start_keeper(agent: str, socket_path: Path | None, workspace: str, state_path: Path,
                 intent_id: str | None, timeout: float = START_TIMEOUT) -> dict[str, Any]:
    """Start a keeper and wait up to `timeout` s for its first line: {"session_id", "pid",
    "intent_id", and "intent_note" when `intent_id` could not be selected again}."""
    import subprocess  # here: only a session's first hook call starts a keeper

    command = [sys.executable, "-m", "intentd.daemon.agents.hooks.keeper", "--agent", agent,
               "--workspace", workspace, "--state", str(state_path)]
    if socket_path is not None:
        command += ["--socket", str(socket_path)]
    if intent_id:
        command += ["--intent", intent_id]
    # Its own session and no inherited stdio: agents wait for the hook's stdout to close.
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], max(0.0, timeout))
    line = process.stdout.readline() if ready else b""
    process.stdout.close()
    try:
        info = json.loads(line)
    except ValueError:
        info = None
    if not isinstance(info, dict) or "error" in info or "session_id" not in info:
        if process.poll() is None:
            process.kill()
            process.wait()
        why = info.get("error") if isinstance(info, dict) else f"it did not start in {timeout:.1f} s"
        raise KeeperFailed(f"could not open a daemon session: {why}", timed_out=not ready)
    process.returncode = 0  # it lives on by design; do not warn about it at exit
    return info


def hold(client: Client, state_path: Path, session_id: str) -> None:
    """Wait until the daemon, the state file or the idle limit says to stop."""
    while True:
        try:
            client.next_notification(timeout=POLL_SECONDS)
        except DaemonUnavailable:
            return
        try:
            state = json.loads(state_path.read_text())
        except (OSError, ValueError):
            return
        if state.get("session_id") != session_id:
            return
        if time.time() - float(state.get("updated_at") or 0) > IDLE_LIMIT:
            return


def open_session(client: Client, agent: str, workspace: str,
                 intent_id: str | None) -> dict[str, Any]:
    client.initialize(f"intentd-{agent}-keeper")
    opened = client.call(protocol.SESSIONS_OPEN, {"workspace": workspace, "agent": agent})
    info: dict[str, Any] = {"session_id": opened["session_id"], "workspace": opened["workspace"],
                            "pid": os.getpid(), "intent_id": None}
    if intent_id:
        answer = client.call(protocol.INTENTS_SELECT, {"session_id": opened["session_id"],
                                                       "intent_id": intent_id})
        if answer["decision"]["decision"] == "allow":
            info["intent_id"] = intent_id
        else:
            info["intent_note"] = answer["decision"]["reason"]
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="intentd-hook-keeper")
    parser.add_argument("--agent", required=True, help="the agent's name, as the ledger shows it")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--socket", type=Path)
    parser.add_argument("--intent")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    client = Client(args.socket, timeout=10)
    try:
        client.connect()
        info = open_session(client, args.agent[:100], args.workspace, args.intent)
    except (DaemonUnavailable, RpcError, TimeoutError, KeyError, TypeError) as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
        return 1
    print(json.dumps(info), flush=True)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the hook has read its line; nothing else goes out
    try:
        hold(client, args.state, info["session_id"])
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
