"""Sandbox benchmark: what confining a command costs, and what the scope audit after it costs.

Run: python tests/bench/bench_sandbox.py [--runs 200] [--files 50000] [--reps 15]
Prints markdown tables; asserts nothing about timings.

(1) Per command, in one run, interleaved: `true` through execute_command confined by Landlock,
    the same with Landlock switched off (the ABI probe forced to 0: a temp folder, no rules),
    and a bare `subprocess.run` of `bash -c true` (no tool: no output reader, no temp folder).
    Also the parent's share alone (building the rule set and the temp folder).
(2) The scope audit after a command that changed 10 files of a workspace of --files files
    (watcher running): 6 changed and 4 created outside the scope, restored, after a command
    nothing confined (the audit sweeps for writes through hard links) and after a confined one
    (no sweep); the sweep alone; and 10 changed inside it, audited and kept.
(3) The link sweep in a monorepo whose packages each have an ignored node_modules/, with those
    folders left out by name and listed whole.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from intentd.daemon.checkpoints import CheckpointStore, sweep  # noqa: E402
from intentd.daemon.checkpoints.ignore import CheckpointIgnore  # noqa: E402
from intentd.daemon.engine.intents import Intent  # noqa: E402
from intentd.daemon.sandbox import git_control  # noqa: E402
from intentd.daemon.sandbox.audit import audit  # noqa: E402
from intentd.daemon.sandbox.confine import SandboxRequest, confine  # noqa: E402
from intentd.daemon.sandbox.landlock import FORCE_ABI_ENV, kernel_abi  # noqa: E402
from intentd.daemon.tools.base import ToolContext  # noqa: E402
from intentd.daemon.tools.command import execute_command  # noqa: E402
from tests.bench.bench_checkpoints import PER_DIR, generate, rel_path  # noqa: E402


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.2f}"


def p90(samples: list[float]) -> str:
    return f"{sorted(samples)[int(len(samples) * 0.9)] * 1000:.2f}"


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def command_overhead(root: Path, runs: int) -> None:
    request = SandboxRequest(str(root), ("src/**",))
    ctx = ToolContext(str(root), (), str(root), lambda _id: None, lambda _p: False, request)
    samples: dict[str, list[float]] = {"confined": [], "unconfined": [], "bare": [], "build": []}

    def unconfined() -> None:
        os.environ[FORCE_ABI_ENV] = "0"
        try:
            execute_command(ctx, {"command": "true"})
        finally:
            del os.environ[FORCE_ABI_ENV]

    def build() -> None:
        confine(request).close()

    steps = {"confined": lambda: execute_command(ctx, {"command": "true"}),
             "unconfined": unconfined,
             "bare": lambda: subprocess.run(["bash", "-c", "true"], stdin=subprocess.DEVNULL,
                                            capture_output=True, start_new_session=True),
             "build": build}
    for step in steps.values():  # warm up
        step()
    for _ in range(runs):
        for name, step in steps.items():
            samples[name].append(timed(step))
    extra = statistics.median(samples["confined"]) - statistics.median(samples["unconfined"])
    print(f"\n## Confinement per command (Landlock ABI {kernel_abi()}, {runs} runs, median / p90 ms)\n")
    print("| confined | unconfined (same tool, ABI forced 0) | bare subprocess.run | "
          "rule set + temp folder alone | confined − unconfined |")
    print("|---|---|---|---|---|")
    print(f"| {ms(samples['confined'])} / {p90(samples['confined'])} "
          f"| {ms(samples['unconfined'])} / {p90(samples['unconfined'])} "
          f"| {ms(samples['bare'])} / {p90(samples['bare'])} "
          f"| {ms(samples['build'])} / {p90(samples['build'])} | {extra * 1000:.2f} |")


def audit_cost(base: Path, count: int, reps: int) -> None:
    root = base / "ws"
    root.mkdir()
    generate(root, count)
    # the scope: the first top folder the generator fills; strays go to its second one
    inside, other = rel_path(0).split("/")[0], rel_path(PER_DIR * 40).split("/")[0]
    intent = Intent("INT-1", "bench", "IN_PROGRESS", (f"{inside}/**",))
    git_status = _git_status_ms(root, reps)
    store = CheckpointStore(root, base / "state")
    # where a confined command could write (all of it but the scope's own folder: every stray
    # lands there): its audit needs no sweep, since Landlock lets it make no link across folders
    writable = tuple(sorted({p.split("/")[0] for p in os.listdir(root)} - {inside}))
    times: dict[str, list[float]] = {"unconfined": [], "confined": [], "kept": [], "sweep": []}
    try:
        store.create(None, label="baseline")
        for rep in range(reps):
            for kind, how in (("unconfined", None), ("confined", writable)):
                time.sleep(0.05)  # let the previous step's events settle
                cp = store.create(None, label="before command").id
                mark = store.git_mark()  # as the daemon takes it, for the repositories made
                outside = [rel_path(count - 1 - (2 * rep + (how is None)) * 6 - k)
                           for k in range(6)]
                for path in outside:
                    with open(root / path, "a", encoding="utf-8") as handle:
                        handle.write("# changed\n")
                for k in range(4):
                    (root / other / f"new_{kind}_{rep}_{k}.py").write_text("stray\n")
                times[kind].append(timed(lambda c=cp, w=how, m=mark: _checked(
                    audit(store, c, intent, "restore", writable=w,
                          git_before=git_control.Before(None, mark=m)), 10)))
            time.sleep(0.05)
            cp = store.create(None, label="before command").id
            mark = store.git_mark()
            for k in range(10):
                with open(root / rel_path(rep * 10 + k), "a", encoding="utf-8") as handle:
                    handle.write("# in scope\n")
            times["sweep"].append(timed(lambda c=cp: store.sweep(c)))
            times["kept"].append(timed(lambda c=cp, m=mark: _checked(
                audit(store, c, intent, "restore", git_before=git_control.Before(None, mark=m)),
                0)))
    finally:
        store.close()
    print(f"\n## Scope audit after a command that changed 10 of {count} files "
          f"(watcher running, {reps} reps, median / p90 ms)\n")
    print("| 10 outside the scope, found and restored: unconfined (with the link sweep) "
          "| the same, confined (no sweep) | the sweep alone | 10 inside the scope, unconfined |")
    print("|---|---|---|---|")
    print(" | ".join(["", *(f"{ms(times[k])} / {p90(times[k])}"
                           for k in ("unconfined", "confined", "sweep", "kept")), ""]).strip())
    ratio = statistics.median(times["sweep"]) * 1000 / float(git_status)
    print(f"\nFor scale, `git status` of the same tree (a stat of every file too), same run: "
          f"{git_status} ms median; the sweep costs {ratio:.2f}× it")


def _git_status_ms(root: Path, reps: int) -> str:
    """The median ms of `git status` in a committed copy of the tree, its index warm."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
                        *args], cwd=root, check=True, capture_output=True)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("status", "--porcelain")  # warms the index
    samples = [timed(lambda: git("status", "--porcelain")) for _ in range(reps)]
    shutil.rmtree(root / ".git")  # the store then sees what it saw before: no repository
    return ms(samples)


def sweep_in_a_monorepo(base: Path, packages: int, reps: int) -> None:
    """The link sweep in a JS monorepo, every package with a node_modules/ the root .gitignore
    ignores: with those folders left out by name, and listed whole, in the same run."""
    root = base / "mono"
    (root / "packages").mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\n")
    for package in range(packages):
        for module in range(50):
            folder = root / "packages" / f"p{package}" / "node_modules" / f"m{module}"
            folder.mkdir(parents=True)
            for n in range(100):
                (folder / f"f{n}.js").write_text("x\n")
        (root / "packages" / f"p{package}" / "src").mkdir()
        (root / "packages" / f"p{package}" / "src" / "app.js").write_text("x\n")
    rules, since = CheckpointIgnore(str(root)), time.time_ns()
    named = [timed(lambda: sweep.changed_since(str(root), rules, since)) for _ in range(reps)]
    names = sweep._ignored_names
    sweep._ignored_names = lambda _root: []  # what the sweep costs without the names
    try:
        whole = [timed(lambda: sweep.changed_since(str(root), rules, since)) for _ in range(reps)]
    finally:
        sweep._ignored_names = names
    print(f"\n## The link sweep in a monorepo of {packages} packages, {packages * 5000:,} files in "
          f"their node_modules/ (median / p90 ms)\n")
    print("| node_modules/ left out by name | listed whole |")
    print("|---|---|")
    print(f"| {ms(named)} / {p90(named)} | {ms(whole)} / {p90(whole)} |")


def _checked(result: object, undone: int) -> None:
    got = len(getattr(result, "undone", ())) if result is not None else 0
    if got != undone:
        raise SystemExit(f"the audit undid {got} files, expected {undone}: {result}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--packages", type=int, default=20, help="of the monorepo (5k files each)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="itd-bench-sandbox-"))
    try:
        (base / "cmd" / "src").mkdir(parents=True)
        command_overhead(base / "cmd", args.runs)
        audit_cost(base, args.files, args.reps)
        sweep_in_a_monorepo(base, args.packages, args.reps)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
