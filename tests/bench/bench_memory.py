"""Daemon memory benchmark: a real daemon, watching on, after a workspace's warm-up and first command.

Run: python tests/bench/bench_memory.py [--sizes 50000,200000] [--reuse DIR]
Prints a markdown table; asserts nothing about the figures. Target: ≤ 150 MiB at 500k files.

For each size N: a workspace of N small files in N/10 folders (bench_checkpoints' generator with
10 files a folder), a real `intentd serve` (its own state folder, so every run starts cold),
and one client that
  1. reads the daemon's memory before any workspace is opened ("idle");
  2. opens a session on the workspace, which starts the background warm-up, and waits for its
     `checkpoints/progress` "done";
  3. changes 10 files, then authorizes an `execute_command` call, which takes a command
     checkpoint (the watcher says what changed);
  4. reads VmRSS (resident now) and VmHWM (the peak) from /proc/PID/status.
"idle" is what the daemon costs with no workspace; "rss" minus "idle" is what a workspace of N
files costs it. With --reuse DIR the generated trees are kept there and used again.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tests package

from intentd.daemon import protocol  # noqa: E402
from intentd.daemon.client import Client  # noqa: E402
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace  # noqa: E402
from tests.bench import bench_checkpoints  # noqa: E402
from tests.bench.bench_checkpoints import status  # noqa: E402

bench_checkpoints.PER_DIR = 10  # the monorepo shape: 500k files in 50k folders
WARM_UP_TIMEOUT = 3600.0
SHOW_REGIONS = False


@dataclass
class Row:
    files: int
    idle_mib: float
    warm_mib: float
    rss_mib: float
    hwm_mib: float
    warm_s: float
    command_ms: float
    checkpoint_files: int
    coverage: str


def regions(pid: int, top: int = 8) -> str:
    """The process's largest resident mappings (where the memory is: heap, arenas, libraries)."""
    found: list[tuple[int, str]] = []
    with open(f"/proc/{pid}/smaps", encoding="ascii", errors="replace") as handle:
        name = ""
        for line in handle:
            fields = line.split()
            if fields and "-" in fields[0] and not fields[0].endswith(":"):
                name = " ".join(fields[5:]) or f"anonymous {fields[0]}"
            elif fields and fields[0] == "Rss:":
                found.append((int(fields[1]), name))
    found.sort(reverse=True)
    return "\n".join(f"  {kib / 1024:7.1f} MiB  {name}" for kib, name in found[:top])


def workspace(base: Path, count: int) -> Path:
    """A generated tree of count files (made once per folder when reused)."""
    root = base / f"ws-{count}"
    done = root / ".generated"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        started = time.monotonic()
        bench_checkpoints.generate(root, count)
        make_workspace(root, make_intent(owned_scope=["**"]),
                       policy={"auto_approve": {"all_commands": True}})
        done.write_text("")
        print(f"generated {count:,} files in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return root


def wait_warm(client: Client) -> None:
    deadline = time.monotonic() + WARM_UP_TIMEOUT
    while time.monotonic() < deadline:
        message = client.next_notification(timeout=deadline - time.monotonic())
        if message is not None and message["params"]["phase"] == "done":
            return
    raise TimeoutError("the warm-up did not finish")


def measure(count: int, tree: Path, scratch: Path) -> Row:
    root = workspace(tree, count)
    with DaemonProcess(scratch / "d.sock", scratch / f"state-{count}") as daemon, \
            Client(daemon.socket_path, timeout=600) as client:
        assert daemon.process is not None
        pid = daemon.process.pid
        client.initialize("bench")
        client.call(protocol.EVENTS_SUBSCRIBE, {"events": [protocol.CHECKPOINTS_PROGRESS]})
        time.sleep(0.5)
        idle = status(pid)["VmRSS"]
        started = time.monotonic()
        session_id = client.call(protocol.SESSIONS_OPEN, {"workspace": str(root),
                                                          "agent": "bench"})["session_id"]
        wait_warm(client)
        warm_s = time.monotonic() - started
        warm = status(pid)["VmRSS"]
        client.call(protocol.INTENTS_SELECT, {"session_id": session_id, "intent_id": "INT-1"})
        stamp = time.time_ns()
        bench_checkpoints.touch(root, list(range(0, count, max(1, count // 10)))[:10], stamp)
        began = time.perf_counter()
        answer = client.call(protocol.TOOLS_AUTHORIZE, {
            "session_id": session_id, "tool": "execute_command",
            "args": {"command": f"touch out-{stamp}.txt"}})
        command_ms = (time.perf_counter() - began) * 1000
        if answer["decision"] != "allow" or not answer.get("checkpoint_id"):
            raise RuntimeError(f"the command was not allowed with a checkpoint: {answer}")
        time.sleep(0.5)  # let the upkeep the checkpoint may start finish
        after = status(pid)
        if SHOW_REGIONS:
            print(regions(pid), file=sys.stderr)
        listed = client.call(protocol.CHECKPOINTS_LIST, {"workspace": str(root)})["checkpoints"]
        last = listed[-1]
    return Row(count, idle, warm, after["VmRSS"], after["VmHWM"], warm_s, command_ms,
               len(last["files"]), last["coverage"] or "watcher")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50000,200000")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="keep generated trees in this folder and use them again")
    parser.add_argument("--regions", action="store_true",
                        help="also print the daemon's largest memory mappings (to stderr)")
    args = parser.parse_args()
    global SHOW_REGIONS
    SHOW_REGIONS = args.regions
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="itd-mem-", dir="/tmp") as tmp:
        tree = args.reuse or Path(tmp)
        for count in sizes:
            rows.append(measure(count, tree, Path(tmp)))
            print(rows[-1], file=sys.stderr)
    print("| files | folders | idle RSS (MiB) | after warm-up | after 1st command | peak (VmHWM) | "
          "warm-up (s) | command (ms) | files saved | found by |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row.files:,} | {row.files // 10:,} | {row.idle_mib:.0f} | {row.warm_mib:.0f} | "
              f"{row.rss_mib:.0f} | {row.hwm_mib:.0f} | {row.warm_s:.1f} | {row.command_ms:.1f} | "
              f"{row.checkpoint_files} | {row.coverage} |")


if __name__ == "__main__":
    main()
