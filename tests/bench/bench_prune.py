"""Benchmark: what pruning costs to work out at monorepo size (a manifest alone, no files).

Run: python tests/bench/bench_prune.py [--files 500000] [--checkpoints 1000]
Prints figures; asserts nothing about time.

The manifest is made with a baseline of every file and, after it, checkpoints that each save
5 files again: the shape a long-lived store of a big workspace has. Pruning reads the entries
once (Manifest.holdings: blob sizes, the newest state's bytes, every replaced version), then
works out each checkpoint's share (upkeep.kept_alive) before each drop. Beside it, the query the
prune made before (every live blob's size by a GROUP BY), in a process of its own for its peak.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from intentd.daemon.checkpoints.manifest import Manifest
from intentd.daemon.checkpoints.upkeep import kept_alive

OLD_QUERY = "SELECT sha, MAX(size) FROM entries WHERE sha != '' GROUP BY sha"


def make(path: Path, files: int, checkpoints: int) -> None:
    manifest = Manifest(path, "/ws")
    with manifest.transaction() as db:
        db.executemany(
            "INSERT INTO checkpoints (seq, created_ns, clock_ns, label, kind, complete, files,"
            " skipped, coverage) VALUES (?, 0, 0, 'x', 'command', 1, '[]', '[]', '')",
            ((seq,) for seq in range(1, checkpoints + 1)))
        db.executemany("INSERT INTO entries (path, seq, kind, sha, perm, size, mtime_ns, note)"
                       " VALUES (?, 1, 'file', ?, 420, 1000, 0, '')",
                       ((name(i), sha(str(i))) for i in range(files)))
        db.executemany(
            "INSERT OR IGNORE INTO entries (path, seq, kind, sha, perm, size, mtime_ns, note)"
            " VALUES (?, ?, 'file', ?, 420, 50000, 0, '')",
            ((name((seq * 7919 + j * 104729) % files), seq, sha(f"{seq}-{j}"))
             for seq in range(2, checkpoints + 1) for j in range(5)))
    manifest.close()


def name(i: int) -> str:
    return f"src/d{i // 25}/f{i}.py"


def sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: Path, which: str) -> None:
    """In a process of its own: the time and the growth of peak memory of one way."""
    manifest = Manifest(path, "/ws")
    before = peak_mib()
    started = time.perf_counter()
    if which == "old":
        sizes = {str(r[0]): int(str(r[1])) for r in manifest._query(OLD_QUERY)}  # as it was
        detail = f"{len(sizes):,} blob sizes"
    else:
        held = manifest.holdings()
        seqs = manifest.seqs()
        looked = time.perf_counter()
        kept_alive(seqs, held.superseded)
        shares_ms = (time.perf_counter() - looked) * 1000
        blobs = len(held.current) + len(held.older)
        detail = (f"{blobs:,} blob sizes, {len(held.superseded):,} replaced versions;"
                  f" the shares alone {shares_ms:.1f} ms")
    elapsed = (time.perf_counter() - started) * 1000
    print(f"  {which}: {elapsed:,.0f} ms, peak memory +{peak_mib() - before:.0f} MiB ({detail})")
    if which == "new":
        started = time.perf_counter()
        manifest.drop(manifest.seqs()[1])
        print(f"  one drop: {(time.perf_counter() - started) * 1000:,.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500_000)
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--measure", choices=["old", "new"], help=argparse.SUPPRESS)
    parser.add_argument("--manifest", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.manifest, args.measure)
        return 0
    with tempfile.TemporaryDirectory(prefix="itd-prune-") as tmp:
        path = Path(tmp) / "manifest.sqlite3"
        make(path, args.files, args.checkpoints)
        print(f"{args.files:,} files, {args.checkpoints:,} checkpoints:")
        for which in ("old", "new", "old", "new"):  # each "new" drops one checkpoint too
            subprocess.run([sys.executable, __file__, "--measure", which, "--manifest", str(path)],
                           check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
