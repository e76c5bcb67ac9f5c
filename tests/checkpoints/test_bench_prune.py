"""The pruning benchmark still runs against the manifest as it is: it builds its manifest with
SQL of its own, and twice a change of the schema broke it with no test to say so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_prune.py"


def test_the_pruning_benchmark_runs_on_a_small_manifest() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--files", "300", "--checkpoints", "20"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "300 files, 20 checkpoints:" in done.stdout
    assert done.stdout.count("one drop:") == 2, done.stdout
