"""The command-policy benchmark still runs: its figures in the README must be reproducible by
the command printed next to them. A handful of commands only; timings are not asserted."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_commands.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_commands", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_runs_on_a_few_commands() -> None:
    bench = _load()
    commands = bench.generate(40)
    assert len(set(commands)) == 40
    timings = bench.uncached(commands)
    assert len(timings) == 40 and all(t >= 0 for t in timings)
    assert bench.cached(commands[:10], 100) > 0
    assert bench.nested(2, shells=True).startswith("bash -lc ")
