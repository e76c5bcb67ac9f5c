"""Benchmark: what auditing a hook-based agent's read-only command adds to its round trip.

Run: python tests/bench/bench_read_audit.py [--rounds 300] [--files 5000]
A real daemon and three workspaces of --files files each, one agent session on each with an
intent selected; `tools/authorize` then `tools/report` of `cat src/fN.py` (a different file each
call, as a hook-based agent sends them), in alternating blocks so the same load falls on all:
- before: `scope_audit: off`, which takes no checkpoint for a read (what every read got before);
- after, nothing changed since the store's latest checkpoint: it serves (the common case);
- after, one file changed before each read (a person's edit, untimed): a new checkpoint.
Prints p50 and p90 per round trip, and what the audit adds at each. Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from intentd.daemon import protocol  # noqa: E402
from intentd.daemon.client import Client  # noqa: E402
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace  # noqa: E402

BLOCK = 25
WARM_UP = 20


class Reader:
    """One agent session on one workspace: authorize a read, then report it run."""

    def __init__(self, socket_path: Path, ws: Path, edit: bool) -> None:
        self.ws, self.edit, self.n = ws, edit, 0
        self.client = Client(socket_path, timeout=60).connect()
        self.client.initialize("bench")
        self.session_id = self.client.call(protocol.SESSIONS_OPEN, {
            "workspace": str(ws), "agent": "claude-code"})["session_id"]
        self.client.call(protocol.INTENTS_SELECT, {"session_id": self.session_id,
                                                   "intent_id": "INT-1"})
        self.checkpoints: set[str] = set()

    def __call__(self) -> float:
        self.n += 1
        if self.edit:  # the person saves a file between two reads: not timed
            (self.ws / "docs" / "notes.md").write_text(f"edit {self.n}\n")
        started = time.perf_counter()
        grant: dict[str, Any] = self.client.call(protocol.TOOLS_AUTHORIZE, {
            "session_id": self.session_id, "tool": "execute_command",
            "args": {"command": f"cat src/f{self.n}.py"}})
        self.client.call(protocol.TOOLS_REPORT, {"session_id": self.session_id,
                                                 "call_id": grant["call_id"], "ok": True,
                                                 "output": f"f = {self.n}\n"})
        took = (time.perf_counter() - started) * 1000
        assert grant["decision"] == "allow", grant
        if grant.get("checkpoint_id"):
            self.checkpoints.add(grant["checkpoint_id"])
        return took


def workspace(root: Path, files: int, audit: str) -> Path:
    return make_workspace(root, make_intent(owned_scope=["src/**"]),
                          policy={"scope_audit": audit},
                          files={**{f"src/f{n}.py": f"f = {n}\n" for n in range(files)},
                                 "docs/notes.md": "notes\n"})


def pct(samples: list[float], q: float) -> float:
    return sorted(samples)[min(len(samples) - 1, int(len(samples) * q))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--files", type=int, default=5000)
    args = parser.parse_args()
    files = max(args.files, args.rounds + WARM_UP + 1)
    with tempfile.TemporaryDirectory(prefix="itd-", dir="/tmp") as tmp:
        root = Path(tmp)
        spaces = {"before": workspace(root / "off", files, "off"),
                  "after": workspace(root / "kept", files, "restore"),
                  "after, a change since": workspace(root / "edit", files, "restore")}
        with DaemonProcess(root / "d.sock", root / "state") as daemon:
            readers = {label: Reader(daemon.socket_path, ws, edit=label.endswith("since"))
                       for label, ws in spaces.items()}
            for reader in readers.values():  # the workspaces loaded, watched, their first checkpoint
                for _ in range(WARM_UP):
                    reader()
            time.sleep(1)
            samples: dict[str, list[float]] = {label: [] for label in readers}
            for _ in range(0, args.rounds, BLOCK):
                for label, reader in readers.items():
                    samples[label].extend(reader() for _ in range(BLOCK))
    base = samples["before"]
    print(f"tools/authorize + tools/report of a read-only command, {files:,} files, "
          f"{len(base)} rounds each")
    print("| case | p50 ms | p90 ms | added p50 | added p90 | checkpoints taken |")
    print("|---|---|---|---|---|---|")
    for label, found in samples.items():
        p50, p90 = statistics.median(found), pct(found, 0.9)
        added = "" if label == "before" else (
            f"{p50 - statistics.median(base):+.2f} | {p90 - pct(base, 0.9):+.2f}")
        print(f"| {label} | {p50:.2f} | {p90:.2f} | {added or ' | '} | "
              f"{len(readers[label].checkpoints)} |")


if __name__ == "__main__":
    main()
