"""Figures: person methods from agent-side processes, planted sockets, a burst of connects.

Run: python tests/bench/bench_trust.py
Starts real daemons on temp sockets and real agent-side processes; prints figures. The
planted sockets of another user need root (chown, setuid); without it only the open-folder
case runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tests package

from intentd.daemon.client import Client, UntrustedDaemon  # noqa: E402
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace  # noqa: E402
from tests.trust.agent_side import (  # noqa: E402
    answers_in,
    probe_command,
    refused,
    run_command,
    session,
    under_fake_agent,
    under_mcp_host,
    under_named_agent,
    wait_file,
)
from tests.trust.spoof import plant, scenarios  # noqa: E402

BURST = 300


def person_methods(root: Path) -> tuple[int, int]:
    ws = make_workspace(root / "ws", make_intent(owned_scope=["**"]),
                        policy={"auto_approve": {"all_commands": True}},
                        files={"README.md": "# demo\n", "src/a.py": "a\n"}).resolve()
    tally = [0, 0]
    with DaemonProcess(root / "d.sock", root / "state") as daemon:
        with Client(daemon.socket_path, timeout=60) as client:
            sid = session(client, ws)
            sock = daemon.socket_path
            results = {"command run by intentd": answers_in(run_command(
                client, sid, probe_command(sock, ws))["result"]["output"])["answers"]}
            out = ws / "src" / "orphan.json"
            run_command(client, sid, f"PROBE_OUT={out} setsid -f sh -c 'sleep 0.3; exec "
                                     f"{probe_command(sock, ws)} >/dev/null 2>&1'")
            results["double-forked orphan"] = answers_in(wait_file(out))["answers"]
        results["under an agent the hook named"] = under_fake_agent(sock, ws)["after"]
        results["under the host of intentd mcp"] = under_mcp_host(sock, ws)["after"]
        results["under a program named claude"] = under_named_agent(sock, ws)["answers"]
        marked = subprocess.run(probe_command(sock, ws), shell=True, capture_output=True,
                                text=True, timeout=60, env={**os.environ, "CLAUDECODE": "1"})
        results["in an agent's environment"] = answers_in(marked.stdout)["answers"]
    for name, answers in results.items():
        done, tried = refused(answers)
        tally[0] += done
        tally[1] += tried
        print(f"  {name:32s} {done}/{tried} refused")
    return tally[0], tally[1]


def spoofed(root: Path) -> tuple[int, int]:
    ws = make_workspace(root / "ws-spoof")
    accepted = tried = 0
    for index, (name, planting) in enumerate(sorted(scenarios(root).items())):
        spoof = plant(root / f"run{index}", **planting)  # type: ignore[arg-type]
        try:
            outcomes = {"library client": _library(spoof.socket_path),
                        "CLI": _cli(spoof.socket_path), "hook": _hook(spoof.socket_path, ws),
                        "MCP server": _mcp(spoof.socket_path, ws)}
        finally:
            spoof.stop()
        talked = spoof.bytes_received() > 0
        for refused_it in outcomes.values():
            tried += 1
            accepted += int(talked or not refused_it)
        print(f"  {name:26s} refused by {sum(outcomes.values())}/{len(outcomes)} clients, "
              f"bytes received {spoof.bytes_received()}")
    return accepted, tried


def _library(path: Path) -> bool:
    try:
        Client(path, timeout=5).connect().initialize("bench")
    except UntrustedDaemon:
        return True
    return False


def _cli(path: Path) -> bool:
    done = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "approve", "a-1",
                           "--socket", str(path)], capture_output=True, text=True, timeout=30)
    return done.returncode == 1 and "refusing to talk to" in done.stderr


def _mcp(path: Path, ws: Path) -> bool:
    done = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "mcp", "--socket", str(path),
                           "--workspace", str(ws)], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    return done.returncode == 1 and "refusing to talk to" in done.stderr


def _hook(path: Path, ws: Path) -> bool:
    event = {"session_id": "bench", "cwd": str(ws), "hook_event_name": "PreToolUse",
             "tool_name": "Bash", "tool_input": {"command": "rm -rf ~ /"}, "tool_use_id": "t1"}
    done = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "hook", "claude-code",
                           "--socket", str(path), "--workspace", str(ws)],
                          input=json.dumps(event), capture_output=True, text=True, timeout=60)
    return bool(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny")


def burst(root: Path) -> int:
    """Raw connects (no retry) while the daemon accepts none: how many are turned away."""
    with DaemonProcess(root / "b.sock", root / "bstate") as daemon:
        assert daemon.process is not None
        daemon.process.send_signal(signal.SIGSTOP)
        thaw = threading.Timer(0.5, daemon.process.send_signal, (signal.SIGCONT,))
        thaw.start()
        turned_away, socks = 0, []
        for _ in range(BURST):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(str(daemon.socket_path))
            except OSError:
                turned_away += 1
            socks.append(sock)
        thaw.join()
        for sock in socks:
            sock.close()
    return turned_away


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="itd-b-", dir="/tmp"))
    os.environ["XDG_STATE_HOME"] = str(root / "xdg-state")
    try:
        print("person methods tried from agent-side processes:")
        done, tried = person_methods(root)
        print(f"  total: {done}/{tried} refused\n\nplanted sockets (uid {os.getuid()}):")
        accepted, attempts = spoofed(root)
        print(f"  total: {accepted} of {attempts} spoofed-socket attempts accepted\n")
        print(f"burst: {burst(root)} of {BURST} simultaneous raw connects turned away "
              "(daemon frozen for 0.5 s)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
