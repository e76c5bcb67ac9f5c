"""Command policy benchmark: decision latency uncached (parse + analysis + rules) and cached.

Run: python tests/bench/bench_commands.py [--count 2000] [--cached-calls 200000]
Prints markdown tables; asserts nothing about timings. Targets: uncached p50 <= 1 ms,
cached >= 50,000 decisions/s, and nesting that costs time linear in the command's length
(`$( … )` nested past 8 is refused unparsed; `bash -lc` nested is followed).

The commands are generated, realistic agent commands (reads, tests, git, pipelines, chains,
wrappers, redirects, substitutions), each distinct so none is served from a cache. They are
Python strings handed to `decide_command()`; nothing is ever run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from intentd.daemon.policy.command import analysis as command_analysis
from intentd.daemon.policy.command import rules as command_rules
from intentd.daemon.policy.command.rules import CommandRules, decide_command

RULES = CommandRules(allow=("npm test", "npm run *", "git status", "pytest *", "make test"),
                     ask=("git push *",), deny=("rm -rf *", "curl *"))

FILES = ["README.md", "src/app.py", "src/core/engine.py", "tests/test_app.py", "package.json",
         "docs/guide.md", "setup.cfg", "Makefile", "lib/util.ts", "cmd/main.go"]
WORDS = ["TODO", "FIXME", "def main", "import os", "useState", "panic", "error", "config"]
TEMPLATES = [
    "ls -la {dir}", "cat {file}", "head -n {n} {file}", "tail -n {n} {file}", "wc -l {file}",
    "grep -rn '{word}' {dir}", "rg -n '{word}' {dir}", "find {dir} -name '*.{ext}' -type f",
    "sed -n '{n},{m}p' {file}", "git status", "git log --oneline -{n}", "git diff HEAD~{n}",
    "git show HEAD~{n} --stat", "git diff -- {file}", "git blame -L {n},{m} {file}",
    "cat {file} | head -{n}", "grep -c '{word}' {file} | sort -n", "ls {dir} | wc -l",
    "git status 2>&1 | head -{n}", "find {dir} -type f | xargs wc -l", "npm test",
    "npm run build -- --filter {n}", "pytest tests/test_{n}.py -q", "make test",
    "cd {dir} && ls -la", "echo $(pwd)/{file}", "python -m pytest -k test_{n}",
    "git add {file} && git commit -m 'fix {n}'", "git push origin feature-{n}",
    "rm -rf build/{n}", "curl -s https://example.com/{n}", "npm install pkg-{n}",
    "sudo apt-get install -y pkg{n}", "bash -c 'cd {dir} && ls -la'",
    "timeout {n} grep -rn '{word}' {dir}", "echo {n} > out/{n}.txt", "cp {file} /tmp/{n}",
    "for f in {dir}/*.{ext}; do wc -l $f; done", "if [ -f {file} ]; then cat {file}; fi",
    "diff <(sort {file}) <(sort {file}.orig{n})", "jq '.scripts' package.json | head -{n}",
    "tree -L {n} {dir}", "du -sh {dir} | sort -h", "stat {file} && wc -c {file}",
    "LANG=C sort {file} | uniq -c | sort -rn | head -{n}",
    "bash -lc 'git log --oneline -{n} && git status'", "bash -lc \"sed -n '{n},{m}p' {file}\"",
    "cat {dir}/{{a,b}}.{ext}", "echo $HOME/{file}", "base64 {file} | head -c {n}",
    "git diff-tree -p HEAD~{n}", "grep -d recurse '{word}' {dir}",
]


def generate(count: int) -> list[str]:
    """`count` distinct commands from the templates, filled in at random (seeded)."""
    rng = random.Random(0)
    found: dict[str, None] = {}
    while len(found) < count:
        template = rng.choice(TEMPLATES)
        file = rng.choice(FILES)
        command = template.format(
            dir=rng.choice(["src", "tests", "docs", "lib", "."]) + f"/m{rng.randint(0, 99)}",
            file=file, n=rng.randint(1, 400), m=rng.randint(401, 900),
            word=rng.choice(WORDS), ext=rng.choice(["py", "ts", "go", "md"]))
        found[command] = None
    return list(found)


def clear_caches() -> None:
    command_analysis.clear_cache()
    command_rules.clear_cache()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def uncached(commands: list[str]) -> list[float]:
    """Milliseconds per decision, each command decided once with empty caches."""
    clear_caches()
    decide_command("git status", RULES)  # import-time and first-call costs out of the way
    clear_caches()
    timings: list[float] = []
    for command in commands:
        started = time.perf_counter_ns()
        decide_command(command, RULES)
        timings.append((time.perf_counter_ns() - started) / 1e6)
    return timings


def cached(commands: list[str], calls: int) -> float:
    """Decisions per second when every command was decided before."""
    for command in commands:
        decide_command(command, RULES)
    rounds = max(1, calls // len(commands))
    started = time.perf_counter()
    for _ in range(rounds):
        for command in commands:
            decide_command(command, RULES)
    return rounds * len(commands) / (time.perf_counter() - started)


def nested(depth: int, shells: bool) -> str:
    """`echo $(echo $(… x))` or `bash -lc 'bash -lc …ls'`, `depth` levels deep."""
    if not shells:
        return "echo " + "$(echo " * depth + "x" + ")" * depth
    command = "ls -la"
    for _ in range(depth):
        command = "bash -lc '" + command.replace("'", "'\\''") + "'"
    return command


def nesting_table() -> None:
    """Uncached milliseconds per decision (median of 5) by nesting depth."""
    print("| nesting | depth | length | outcome | ms |")
    print("|---|---|---|---|---|")
    for shells, depths in ((False, (1, 2, 4, 8, 9, 16, 80, 400)), (True, (1, 2, 4, 6, 8))):
        for depth in depths:
            command = nested(depth, shells)
            runs = []
            for _ in range(5):
                clear_caches()
                started = time.perf_counter_ns()
                verdict = decide_command(command, RULES)
                runs.append((time.perf_counter_ns() - started) / 1e6)
            name = "bash -lc" if shells else "$( … )"
            print(f"| {name} | {depth} | {len(command)} | {verdict.outcome} | "
                  f"{statistics.median(runs):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--cached-calls", type=int, default=200_000)
    args = parser.parse_args()
    commands = generate(args.count)
    timings = uncached(commands)
    outcomes: dict[str, int] = {}
    for command in commands:
        outcome = decide_command(command, RULES).outcome
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    per_second = cached(commands[:500], args.cached_calls)
    print(f"{len(commands)} distinct commands; outcomes: "
          + ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items())))
    print()
    print("| measure | p50 | p90 | p99 | max | mean |")
    print("|---|---|---|---|---|---|")
    print(f"| uncached decision (ms) | {percentile(timings, 0.5):.3f} | "
          f"{percentile(timings, 0.9):.3f} | {percentile(timings, 0.99):.3f} | "
          f"{max(timings):.3f} | {statistics.fmean(timings):.3f} |")
    print()
    print("| measure | value |")
    print("|---|---|")
    print(f"| cached decisions/s (500 commands) | {per_second:,.0f} |")
    print()
    nesting_table()


if __name__ == "__main__":
    main()
