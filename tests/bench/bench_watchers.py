"""Watcher benchmark: the store's own inotify tracker against Watchman, on the same generated trees.

Run: python tests/bench/bench_watchers.py [--sizes 50000,200000] [--reps 15] [--starts 3] [--reuse DIR]
Prints markdown tables; asserts nothing about the figures. Skips, saying so, without `watchman`.

For each size N: N small files in N/10 folders (bench_checkpoints' generator, 10 files a folder).
  ready   our tracker: InotifyTracker.start() until it is ready (every folder watched), in a child
          process of its own; Watchman: `watch-project` until the first `clock` synced to now, then
          a first `since` query, answer (its crawl is done). Each is started --starts times, a fresh
          process each time (the median is shown); a GNU find listing every path of the tree is
          timed beside them, as the reference.
  memory  our tracker: the child's VmRSS growth across start() (and its peak, VmHWM); Watchman:
          its server's VmRSS (and VmHWM) from /proc/PID/status, less what it held idle. Each side
          also costs the kernel one inotify watch per folder, which no RSS shows.
  changes after touching 10 files: our tracker's collect(drain=True), in process as the store
          calls it; Watchman: a `since` query on its unix socket (JSON, one connection kept open,
          synced to now as Watchman does by default), and the same through the `watchman since`
          command line. Each side must report exactly the 10 files touched.
  limit   past the inotify watch limit, in a user namespace (`unshare -U -r`, where
          /proc/sys/user/max_inotify_watches belongs to the namespace): what each one says, and
          whether a file changed in a folder it could not watch is still reported (ours: from
          events, or under a folder it lists as unwatched, which the store scans; the store
          itself is checked end to end in tests/checkpoints/test_watch_limits.py).
Watchman runs as a private server (its own socket, log and state) started for each tree, so its
memory is that tree's alone and no other watch shares it. The figures, and the choice made from
them (no Watchman backend: it lost on every count), are in the README.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tests package

from tests.bench import bench_checkpoints  # noqa: E402
from tests.bench.bench_checkpoints import (  # noqa: E402
    generate,
    rel_path,
    status,  # noqa: E402
    touch,
)

bench_checkpoints.PER_DIR = 10  # the monorepo shape: N files in N/10 folders
CHANGED = 10
SETTLE = 0.05  # seconds between touching files and asking, the same for both sides


def picks(count: int, rep: int) -> list[int]:
    """The files touched in one repetition: 10 spread over the tree, different every time."""
    return random.Random(count * 1000 + rep).sample(range(count), CHANGED)


# -- our tracker, in a child process so that its memory is its own ------------------------------

def tracker_child(root: str, count: int, reps: int, stamp: int) -> dict[str, Any]:
    """Runs in the child: start the tracker, then time collect() after each set of touches."""
    from intentd.daemon.checkpoints.inotify_tracker import InotifyTracker

    before = status()
    tracker = InotifyTracker(root)
    started = time.perf_counter()
    if not tracker.start():
        raise SystemExit("no inotify")
    ready_s = time.perf_counter() - started
    after = status()
    coverage = tracker.coverage()
    tracker.collect(drain=True)
    collect_ms: list[float] = []
    wrong = 0
    for rep in range(reps):
        chosen = picks(count, stamp + rep)
        touch(Path(root), chosen, stamp + rep)
        time.sleep(SETTLE)
        t0 = time.perf_counter()
        snapshot = tracker.collect(drain=True)
        collect_ms.append((time.perf_counter() - t0) * 1000)
        if snapshot is None or set(snapshot.files) != {rel_path(i) for i in chosen}:
            wrong += 1
    tracker.stop()
    return {"ready_s": ready_s, "rss_before": before["VmRSS"], "rss_after": after["VmRSS"],
            "hwm_after": after["VmHWM"], "watched": coverage.watched_folders,
            "unwatched": len(coverage.unwatched), "collect_ms": collect_ms, "wrong": wrong}


def run_tracker(root: Path, count: int, reps: int, stamp: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child-tracker", str(root), str(count),
                           str(reps), str(stamp)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the tracker's child failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


# -- Watchman ------------------------------------------------------------------------------------

class Watchman:
    """A private Watchman server (own socket, log and state file), and a JSON client on its socket."""

    def __init__(self, scratch: Path) -> None:
        scratch.mkdir(parents=True, exist_ok=True)
        self.sock = str(scratch / "sock")
        if os.path.exists(self.sock):  # a previous server's, left behind
            os.unlink(self.sock)
        self.log = scratch / "log"
        self.server = subprocess.Popen(
            ["watchman", "--foreground", "--no-save-state", f"--sockname={self.sock}",
             f"--logfile={self.log}", f"--statefile={scratch / 'state'}",
             f"--pidfile={scratch / 'pid'}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.conn.connect(self.sock)
                break
            except OSError:  # not listening yet
                self.conn.close()
            if self.server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"watchman did not start; its log:\n{self.log_text()}")
            time.sleep(0.02)
        self.buffer = b""
        self.pid = int(self.call("get-pid")["pid"])

    def call(self, *command: object) -> dict[str, Any]:
        """One command as a JSON line; the answer (unilateral log lines skipped)."""
        self.conn.sendall(json.dumps(list(command)).encode() + b"\n")
        while True:
            while b"\n" not in self.buffer:
                chunk = self.conn.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("watchman closed the connection")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            answer: dict[str, Any] = json.loads(line)
            if not answer.get("unilateral"):
                return answer

    def cli(self, *args: str) -> dict[str, Any]:
        done = subprocess.run(["watchman", "--no-spawn", "--no-pretty", f"--sockname={self.sock}",
                               *args], capture_output=True, text=True, check=False)
        answer: dict[str, Any] = json.loads(done.stdout or "{}")
        return answer

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        try:
            self.call("shutdown-server")
        except OSError:
            pass
        self.conn.close()
        try:
            self.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()


def run_watchman(root: Path, scratch: Path, count: int, reps: int, stamp: int) -> dict[str, Any]:
    man = Watchman(scratch)
    try:
        idle = status(man.pid)
        started = time.perf_counter()
        watch = man.call("watch-project", str(root))
        clock = man.call("clock", str(root), {"sync_timeout": 600_000})
        clock_s = time.perf_counter() - started
        first = man.call("query", str(root), {"since": clock["clock"], "fields": ["name"]})
        ready_s = time.perf_counter() - started
        after = status(man.pid)
        since = first["clock"]
        query_ms: list[float] = []
        wrong = 0
        for rep in range(reps):
            chosen = picks(count, stamp + rep)
            touch(root, chosen, stamp + rep)
            time.sleep(SETTLE)
            t0 = time.perf_counter()
            answer = man.call("query", str(root), {"since": since, "fields": ["name"]})
            query_ms.append((time.perf_counter() - t0) * 1000)
            since = answer["clock"]
            if set(answer.get("files", ())) != {rel_path(i) for i in chosen}:
                wrong += 1
        cli_ms: list[float] = []
        for rep in range(reps, 2 * reps):
            chosen = picks(count, stamp + rep)
            touch(root, chosen, stamp + rep)
            time.sleep(SETTLE)
            t0 = time.perf_counter()
            answer = man.cli("since", str(root), since)
            cli_ms.append((time.perf_counter() - t0) * 1000)
            since = answer.get("clock", since)
            if {f["name"] for f in answer.get("files", ())} != {rel_path(i) for i in chosen}:
                wrong += 1
        t0 = time.perf_counter()
        man.cli("version")
        cli_startup_ms = (time.perf_counter() - t0) * 1000
        final = status(man.pid)
        return {"watch": watch, "clock_s": clock_s, "ready_s": ready_s, "rss_idle": idle["VmRSS"],
                "rss_after": after["VmRSS"], "hwm_after": after["VmHWM"], "rss_final": final["VmRSS"],
                "hwm_final": final["VmHWM"], "query_ms": query_ms, "cli_ms": cli_ms,
                "cli_startup_ms": cli_startup_ms, "wrong": wrong}
    finally:
        man.close()


# -- the tree and the reference ------------------------------------------------------------------

def tree(base: Path, count: int) -> Path:
    """The generated tree of count files (kept and used again under --reuse)."""
    root = base / f"ws-{count}"
    done = base / f"ws-{count}.done"
    if not done.exists():
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        generate(root, count)
        done.write_text("generated\n")
    return root


def find_s(root: Path) -> float:
    """The reference: GNU find listing every path of the tree (a full walk, no stat of files)."""
    t0 = time.perf_counter()
    subprocess.run(["find", str(root), "-printf", ""], check=True)
    return time.perf_counter() - t0


@dataclass
class Row:
    files: int
    folders: int
    find_s: float
    ours: dict[str, Any] = field(default_factory=dict)
    theirs: dict[str, Any] = field(default_factory=dict)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def measure(base: Path, count: int, reps: int, starts: int) -> Row:
    """Each side started `starts` times (the median start is shown); the last start is measured."""
    root = tree(base, count)
    folders = sum(1 for _ in os.walk(root))
    stamp = int(time.time())
    reference = statistics.median(find_s(root) for _ in range(starts))
    ours: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    ours_ready: list[float] = []
    theirs_ready: list[float] = []
    theirs_clock: list[float] = []
    for start in range(starts):
        last = start == starts - 1
        print(f"  {count:,} files, start {start + 1}/{starts}: our tracker, then watchman",
              file=sys.stderr, flush=True)
        ours = run_tracker(root, count, reps if last else 0, stamp)
        theirs = run_watchman(root, base / f"watchman-{count}", count, reps if last else 0,
                              stamp + 10 * reps)
        ours_ready.append(ours["ready_s"])
        theirs_ready.append(theirs["ready_s"])
        theirs_clock.append(theirs["clock_s"])
    ours["ready_s"] = statistics.median(ours_ready)
    theirs["ready_s"], theirs["clock_s"] = statistics.median(theirs_ready), statistics.median(theirs_clock)
    return Row(count, folders, reference, ours, theirs)


def print_rows(rows: list[Row]) -> None:
    def ratio(a: float, b: float) -> str:
        return f"{a / b:.1f}×" if b > 0 else "-"

    print("\n### Ready to see every change (reference: `find` listing the tree)\n")
    print("| files | folders | find (ref) | ours: start→ready | ×find | watchman: watch→clock "
          "| watch→first query | ×find | watchman / ours |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        o, t = r.ours["ready_s"], r.theirs["ready_s"]
        print(f"| {r.files:,} | {r.folders:,} | {r.find_s:.2f} s | {o:.2f} s | {ratio(o, r.find_s)} "
              f"| {r.theirs['clock_s']:.2f} s | {t:.2f} s | {ratio(t, r.find_s)} | {ratio(t, o)} |")
    print("\n### Memory for the watch (MiB; the kernel's inotify watches not included, equal on both)\n")
    print("| files | ours: RSS growth | ours: process peak | watchman: RSS growth | watchman: RSS "
          "| watchman: peak | watchman / ours (growth) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        og = r.ours["rss_after"] - r.ours["rss_before"]
        tg = r.theirs["rss_final"] - r.theirs["rss_idle"]
        print(f"| {r.files:,} | {og:.1f} | {r.ours['hwm_after']:.1f} | {tg:.1f} "
              f"| {r.theirs['rss_final']:.1f} | {r.theirs['hwm_final']:.1f} | {ratio(tg, og)} |")
    print(f"\n### What changed, after touching {CHANGED} files (median ms)\n")
    print("| files | ours: collect() | watchman: since (socket, JSON) | ×ours | watchman since (CLI) "
          "| ×ours | CLI alone (`watchman version`) | wrong answers ours / watchman |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        o = median(r.ours["collect_ms"])
        q = median(r.theirs["query_ms"])
        c = median(r.theirs["cli_ms"])
        print(f"| {r.files:,} | {o:.2f} | {q:.2f} | {ratio(q, o)} | {c:.1f} | {ratio(c, o)} "
              f"| {r.theirs['cli_startup_ms']:.1f} | {r.ours['wrong']} / {r.theirs['wrong']} |")


# -- past the watch limit ------------------------------------------------------------------------

def limit_child(side: str, root: str, scratch: str, count: int) -> dict[str, Any]:
    """Runs in the namespace, the limit lowered: watch the tree, touch files everywhere, ask."""
    chosen = [i * (count // CHANGED) for i in range(CHANGED)]
    expected = {rel_path(i) for i in chosen}
    out: dict[str, Any] = {"limit": Path("/proc/sys/user/max_inotify_watches").read_text().strip()}
    if side == "ours":
        from intentd.daemon.checkpoints.inotify_tracker import InotifyTracker

        tracker = InotifyTracker(root)
        tracker.start()
        tracker.collect(drain=True)
        touch(Path(root), chosen, 1)
        snapshot = tracker.collect(drain=True)
        coverage = tracker.coverage()
        out["coverage"] = {"watched": coverage.watched_folders, "unwatched": len(coverage.unwatched),
                           "reason": coverage.reason}
        if snapshot is None:
            out["answer"] = f"scan everything: {tracker.why_lost}"
            out["reported"] = CHANGED  # the store scans: nothing is missed
        else:
            seen = set(snapshot.files)
            # a file in an unwatched folder is found by scanning that folder, as the store does
            scanned = {rel for rel in expected
                       if any(d == "" or rel.startswith(d + "/") for d in snapshot.unwatched)}
            out["answer"] = (f"{len(seen & expected)} files from events and {len(snapshot.unwatched)} "
                             "unwatched folders to scan, where the rest are")
            out["reported"] = len(expected & (seen | scanned))
        tracker.stop()
    else:
        man = Watchman(Path(scratch))
        try:
            watch = man.call("watch-project", root)
            out["watch"] = {k: v for k, v in watch.items() if k in ("watch", "warning", "error")}
            clock = man.call("clock", root, {"sync_timeout": 60_000})
            out["clock"] = clock.get("error") or clock.get("clock")
            touch(Path(root), chosen, 1)
            time.sleep(SETTLE)
            since = man.call("query", root, {"since": clock.get("clock", "c:0:0"), "fields": ["name"]})
            out["answer"] = since.get("error") or f"{len(since.get('files', ()))} files"
            out["reported"] = len(expected & set(since.get("files", ())))
            other = Path(scratch) / "other"
            other.mkdir(exist_ok=True)
            elsewhere = man.call("watch-project", str(other))
            out["another_root"] = elsewhere.get("error") or "watched"
            out["log_lines"] = sum("user limit on the total number of inotify watches" in line
                                   for line in man.log_text().splitlines())
        finally:
            man.close()
    return out


def run_limit(base: Path, count: int, limit: int) -> dict[str, dict[str, Any]]:
    root = tree(base, count)
    results: dict[str, dict[str, Any]] = {}
    for side in ("ours", "watchman"):
        scratch = base / f"limit-{side}"
        shutil.rmtree(scratch, ignore_errors=True)
        done = subprocess.run(["unshare", "-U", "-r", sys.executable, __file__, "--set-limit", str(limit),
                               "--child-limit", side, str(root), str(scratch), str(count)],
                              capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            results[side] = {"answer": f"failed: {done.stderr.strip()[-500:]}", "reported": 0}
        else:
            results[side] = json.loads(done.stdout.splitlines()[-1])
    return results


def brief(value: object) -> str:
    """A Watchman message cut to its first two lines (the rest is the same advice every time)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return " / ".join(text.strip().splitlines()[:2])


def print_limit(count: int, limit: int, results: dict[str, dict[str, Any]]) -> None:
    folders = count // bench_checkpoints.PER_DIR
    print(f"\n### Past the watch limit ({limit:,} watches, {count:,} files in about {folders:,} folders, "
          f"{CHANGED} files changed across the tree)\n")
    ours, theirs = results["ours"], results["watchman"]
    print(f"- ours: {ours.get('coverage')}; {ours['answer']}; the store records "
          f"**{ours['reported']} of {CHANGED}**")
    watch = theirs.get("watch") or {}
    print(f"- watchman: watch-project -> {brief(watch.get('error') or watch.get('warning') or watch)}")
    print(f"- watchman: clock -> {brief(theirs.get('clock'))}")
    print(f"- watchman: since -> {brief(theirs.get('answer'))}; reports "
          f"**{theirs['reported']} of {CHANGED}**")
    print(f"- watchman: a second, unrelated root -> {brief(theirs.get('another_root'))}")
    print(f"- watchman: log lines about the limit: {theirs.get('log_lines')}")


# -- main ----------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="50000,200000")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--starts", type=int, default=3, help="starts of each watcher per size")
    parser.add_argument("--reuse", type=Path, default=None, help="keep the generated trees here")
    parser.add_argument("--limit-files", type=int, default=20000, help="tree for the limit check")
    parser.add_argument("--limit", type=int, default=1000, help="watches allowed in the limit check")
    parser.add_argument("--child-tracker", nargs=4, metavar=("ROOT", "N", "REPS", "STAMP"))
    parser.add_argument("--child-limit", nargs=4, metavar=("SIDE", "ROOT", "SCRATCH", "N"))
    parser.add_argument("--set-limit", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.set_limit is not None:  # inside a user namespace: its own limit, not the system's
        with open("/proc/sys/user/max_inotify_watches", "w", encoding="ascii") as handle:
            handle.write(str(args.set_limit))
    if args.child_tracker:
        root, count, reps, stamp = args.child_tracker
        print(json.dumps(tracker_child(root, int(count), int(reps), int(stamp))))
        return
    if args.child_limit:
        side, root, scratch, count = args.child_limit
        print(json.dumps(limit_child(side, root, scratch, int(count))))
        return
    if shutil.which("watchman") is None:
        print("SKIP: watchman is not installed (Debian: apt-get install watchman); nothing to compare")
        return
    version = subprocess.run(["watchman", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"watchman {version}; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs; "
          f"{CHANGED} files touched per repetition, {args.reps} repetitions, {args.starts} starts")
    base = args.reuse or Path(tempfile.mkdtemp(prefix="bench-watch-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        rows: list[Row] = []
        for count in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(base, count, args.reps, args.starts))
        print_rows(rows)
        if shutil.which("unshare") is None:
            print("\nSKIP the limit check: no unshare(1)")
        else:
            results = run_limit(base, args.limit_files, args.limit)
            print_limit(args.limit_files, args.limit, results)
    finally:
        if args.reuse is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
