"""Checkpoint benchmark: CheckpointStore vs the anchors' shadow-git method, side by side.

Run: python tests/bench/bench_checkpoints.py [--sizes 1000,10000,50000] [--reps 15]
Prints markdown tables; asserts nothing about timings.

For each generated workspace (small Python-like files, 25 per folder, a .gitignore):
  anchor = a shadow repo outside the workspace, `git add -A && git commit`, index warm (timed on
           commits after the first, each after touching the files in question);
  (a) checkpoint before a file tool: create([one path]) with the watcher running;
  (b) checkpoint before a command after <= 10 files changed: create(None), watcher running,
      and the same through the full-scan fallback (no watcher): the tree listed by the native
      lister, by GNU find (where the lister was not built), and the Python walk used where
      neither is; each listing alone too, the floor of a walk that stats every file; the
      fallback's CPU time (children included) is printed beside the anchor's, since a loaded
      machine moves wall-clock time the most;
  (c) storage: 100 edits of 1 KiB in a 4 KiB file, one file checkpoint before each edit (our
      store counted whole: objects and manifest; the anchor's shadow .git).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from intentd.daemon.checkpoints import CheckpointStore, listing

GITIGNORE = "\n".join([
    "__pycache__/", "*.py[cod]", "*.so", "build/", "dist/", "*.egg-info/", ".eggs/", ".tox/",
    ".venv/", "venv/", ".mypy_cache/", ".pytest_cache/", ".coverage", "htmlcov/", "*.log",
    "node_modules/", ".DS_Store", "*.swp", ".idea/", ".vscode/", "*.tmp", "/coverage.xml",
]) + "\n"
T = TypeVar("T")
PYTHON_WALK = True  # measure the Python walk too (--no-python-walk leaves it out)
PER_DIR = 25  # files per folder; --per-dir 10 gives the monorepo shape (500k files in 50k folders)
GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@b",
}


def rel_path(i: int) -> str:
    return f"pkg{i // (PER_DIR * 40):03d}/mod{i // PER_DIR:05d}/file{i:06d}.py"


def status(pid: int | str = "self") -> dict[str, float]:
    """VmRSS and VmHWM of the process (this one by default), in MiB."""
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
    return found


def rss_mib() -> float:
    """This process's resident memory now (the store runs in it, as in the daemon)."""
    return status()["VmRSS"]


def generate(root: Path, count: int) -> None:
    """count small files, written with bare os calls (a 50k tree takes about a second)."""
    rng = random.Random(count)
    for i in range(count):
        path = root / rel_path(i)
        if i % PER_DIR == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        body = f"# module {i}\n" + "".join(f"value_{j} = {rng.randint(0, 10**6)}\n"
                                           for j in range(rng.randint(4, 14)))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, body.encode())
        os.close(fd)
    (root / ".gitignore").write_text(GITIGNORE)
    (root / "edit.txt").write_text(text_block(random.Random(0), 4096))


def text_block(rng: random.Random, size: int) -> str:
    """Text that compresses like source code does (words, not random bytes)."""
    words = ["def", "return", "value", "self", "import", "class", "for", "in", "if", "else",
             "None", "True", "data", "result", "config", "path", "items", "index", "=", "+"]
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(words) + (f"_{rng.randint(0, 999)}" if rng.random() < 0.3 else "")
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size - 1] + "\n"


def touch(root: Path, indices: list[int], stamp: int) -> None:
    for i in indices:
        with open(root / rel_path(i), "a", encoding="utf-8") as handle:
            handle.write(f"# touched {stamp}\n")


def du(path: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except FileNotFoundError:  # git's background gc removed it meanwhile
                continue
    return total


def timed(fn: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Wall-clock ms of fn(); with cpu, its CPU ms (this process and its children) appended."""
    time.sleep(0.05)  # let the previous step's I/O and the watcher's events settle, for both sides
    used = cpu_seconds()
    start = time.perf_counter()
    fn()
    wall = (time.perf_counter() - start) * 1000
    if cpu is not None:
        cpu.append((cpu_seconds() - used) * 1000)
    return wall


def cpu_seconds() -> float:
    me, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


class Anchor:
    """The anchors' method: a shadow git repository staging the whole workspace every time."""

    def __init__(self, root: Path, git_dir: Path) -> None:
        self.git = ["git", f"--git-dir={git_dir}", f"--work-tree={root}"]
        self.git_dir = git_dir
        subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], env=GIT_ENV, check=True)
        self.count = 0

    def checkpoint(self) -> None:
        subprocess.run([*self.git, "add", "-A"], env=GIT_ENV, check=True)
        self.count += 1
        subprocess.run([*self.git, "commit", "-q", "--allow-empty", "--no-verify", "-m",
                        f"checkpoint {self.count}"], env=GIT_ENV, check=True)


@dataclass
class Row:
    files: int
    anchor_first: float
    ours_first: float
    anchor_one: float
    ours_file: float
    anchor_ten: float
    ours_command: float
    ours_scan: float
    ours_scan_find: float
    ours_scan_python: float
    anchor_ten_cpu: float
    ours_scan_cpu: float
    native_listing: float
    find_listing: float
    store_growth: int
    anchor_growth: int
    repo_bytes: int
    rss_before: float = 0.0
    rss_after: float = 0.0


def with_find(run: Callable[[], T]) -> T:
    """run() with GNU find listing the tree, as where the native lister was not built."""
    native, listing.native = listing.native, None
    try:
        return run()
    finally:
        listing.native = native


def measure(count: int, reps: int, base: Path) -> Row:
    root, anchor_dir = base / f"ws{count}", base / f"shadow{count}"
    root.mkdir()
    generate(root, count)
    anchor = Anchor(root, anchor_dir)
    anchor_first = timed(anchor.checkpoint)
    rss_before = rss_mib()
    store = CheckpointStore(root, base / f"state{count}")
    scanner = CheckpointStore(root, base / f"scan{count}", watch=False)
    find_scanner = CheckpointStore(root, base / f"findscan{count}", watch=False)
    python_scanner = CheckpointStore(root, base / f"pyscan{count}", watch=False)
    python_scanner._capturer._walker.walk = lambda known: None  # type: ignore[method-assign]
    try:
        ours_first = timed(lambda: store.create(None, label="baseline"))
        rss_after = rss_mib()
        scanner.create(None, label="baseline")
        with_find(lambda: find_scanner.create(None, label="baseline"))
        if PYTHON_WALK:  # its baseline alone takes minutes at 500k files
            python_scanner.create(None, label="baseline")
        row = _measure_warm(count, reps, root, anchor, store, (scanner, find_scanner, python_scanner),
                            anchor_first, ours_first)
        row.rss_before, row.rss_after = rss_before, rss_after
        return row
    finally:
        store.close()
        scanner.close()
        find_scanner.close()
        python_scanner.close()


def _measure_warm(count: int, reps: int, root: Path, anchor: Anchor, store: CheckpointStore,
                  scanners: tuple[CheckpointStore, CheckpointStore, CheckpointStore],
                  anchor_first: float, ours_first: float) -> Row:
    scanner, find_scanner, python_scanner = scanners
    rng = random.Random(1)
    one, ten, ours_file, ours_cmd, ours_scan, ours_python = [], [], [], [], [], []
    ten_cpu: list[float] = []
    ours_find: list[float] = []
    native_listing: list[float] = []  # a listing alone: the floor of any walk that stats every file
    find_listing: list[float] = []
    scan_cpu: list[float] = []
    for rep in range(reps):
        target = rng.randrange(count)
        touch(root, [target], rep)
        one.append(timed(anchor.checkpoint))
        ours_file.append(timed(lambda t=target: store.create([rel_path(t)], label="before write_file")))
        touch(root, [target], rep + 1000)  # what the file tool then writes
        changed = rng.sample(range(count), 10)
        touch(root, changed, rep)
        ten.append(timed(anchor.checkpoint, ten_cpu))
        ours_cmd.append(timed(lambda: store.create(None, label="before command")))
        ours_scan.append(timed(lambda: scanner.create(None, label="before command"), scan_cpu))
        ours_find.append(with_find(lambda: timed(lambda: find_scanner.create(None, label="before command"))))
        native_listing.append(timed(scanner._capturer._walker._list))
        find_listing.append(with_find(lambda: timed(scanner._capturer._walker._list)))
        if PYTHON_WALK:
            ours_python.append(timed(lambda: python_scanner.create(None, label="before command")))
    store_growth, anchor_growth = _storage(root, anchor, root.parent / f"edits{count}")
    repo_bytes = sum(os.lstat(os.path.join(f, n)).st_size
                     for f, _d, names in os.walk(root) for n in names)
    med = statistics.median
    python_walk = med(ours_python) if ours_python else math.nan
    return Row(count, anchor_first, ours_first, med(one), med(ours_file), med(ten), med(ours_cmd),
               med(ours_scan), med(ours_find), python_walk, med(ten_cpu), med(scan_cpu),
               med(native_listing), med(find_listing), store_growth, anchor_growth, repo_bytes)


def _storage(root: Path, anchor: Anchor, state: Path) -> tuple[int, int]:
    """Growth of each store over 100 edits of 1 KiB in edit.txt (4 KiB): ours is a fresh store
    holding only these file checkpoints, the anchor's is its shadow repository."""
    rng = random.Random(2)
    with CheckpointStore(root, state, watch=False) as store:
        store_before, anchor_before = store.disk_usage(), du(anchor.git_dir)
        for i in range(100):
            store.create(["edit.txt"], label=f"before edit {i}")
            text = (root / "edit.txt").read_text()
            at = rng.randrange(0, 3072)
            (root / "edit.txt").write_text(text[:at] + text_block(rng, 1025)[:-1] + text[at + 1024:])
            anchor.checkpoint()
        return store.disk_usage() - store_before, du(anchor.git_dir) - anchor_before


def kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"


def print_tables(rows: list[Row]) -> None:
    print("\n### Checkpoint time (median, ms)\n")
    print("| files | anchor 1st commit | ours 1st (baseline) | anchor, 1 file touched | "
          "(a) file tool | (a) vs anchor | anchor, 10 files touched | (b) command, watcher | "
          "(b) vs anchor | (b) full-scan fallback |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.files:,} | {r.anchor_first:,.0f} | {r.ours_first:,.0f} | {r.anchor_one:.1f} | "
              f"{r.ours_file:.2f} | 1/{r.anchor_one / r.ours_file:.0f} | {r.anchor_ten:.1f} | "
              f"{r.ours_command:.2f} | 1/{r.anchor_ten / r.ours_command:.0f} | {r.ours_scan:.0f} |")
    print("\n### Full-scan fallback (no watcher) against the anchor, 10 files touched (median)\n")
    print("| files | anchor ms | fallback, native lister, ms | vs anchor | its listing alone | "
          "vs anchor | fallback by find, ms | vs anchor | find's listing alone | vs anchor | "
          "Python walk, ms | vs anchor | anchor CPU ms | fallback CPU ms | CPU vs anchor |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        a = r.anchor_ten
        print(f"| {r.files:,} | {a:.0f} | {r.ours_scan:.0f} | {r.ours_scan / a:.2f} | "
              f"{r.native_listing:.0f} | {r.native_listing / a:.2f} | {r.ours_scan_find:.0f} | "
              f"{r.ours_scan_find / a:.2f} | {r.find_listing:.0f} | {r.find_listing / a:.2f} | "
              f"{r.ours_scan_python:.0f} | {r.ours_scan_python / a:.2f} | {r.anchor_ten_cpu:.0f} | "
              f"{r.ours_scan_cpu:.0f} | {r.ours_scan_cpu / r.anchor_ten_cpu:.2f} |")
    print("\n### Memory (resident, MiB) of the process holding the store, watcher on\n")
    print("| files | before opening | after the baseline |")
    print("|---:|---:|---:|")
    for r in rows:
        print(f"| {r.files:,} | {r.rss_before:,.0f} | {r.rss_after:,.0f} |")
    print("\n### Storage growth over 100 edits of 1 KiB in a 4 KiB file (100 KiB edited)\n")
    print("| files | workspace size | ours | anchor's shadow .git |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.files:,} | {kib(r.repo_bytes)} | {kib(r.store_growth)} | {kib(r.anchor_growth)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp dir)")
    parser.add_argument("--per-dir", type=int, default=25, help="files per folder")
    parser.add_argument("--no-python-walk", action="store_true",
                        help="leave out the Python walk (the fallback where there is no GNU find)")
    args = parser.parse_args()
    global PER_DIR, PYTHON_WALK
    PER_DIR = args.per_dir
    PYTHON_WALK = not args.no_python_walk
    base = Path(tempfile.mkdtemp(prefix="bench-cp-", dir=args.dir))
    started = time.perf_counter()
    try:
        rows = []
        for count in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(count, args.reps, base))
            print(f"measured {count:,} files ({time.perf_counter() - started:.0f} s so far): {rows[-1]}",
                  flush=True)
        print_tables(rows)
        print(f"\n{os.cpu_count()} CPUs; git {_git_version()}; total {time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _git_version() -> str:
    out = subprocess.run(["git", "--version"], capture_output=True, text=True, env=GIT_ENV)
    return out.stdout.split()[-1]


if __name__ == "__main__":
    main()
