"""Ignore rules: the same answers as git (checked against `git ls-files`), plus extra rules."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from intentd.daemon.checkpoints.ignore import CheckpointIgnore, compile_lines
from intentd.daemon.checkpoints.scan import scan
from intentd.daemon.policy.ignore import IgnoreRules as PolicyIgnore

from .conftest import StoreFactory, write

FILES = [
    "a.py", "a.pyc", "keep.log", "drop.log", "top.txt", "sub/top.txt", "build/x.o", "src/build/y.o",
    "docs/build", "lib/deep/z.tmp", "lib/deep/keep.tmp", "src/gen/out.js", "src/gen/manual.js",
    "src/gen/.gitignore", "node_modules/pkg/index.js", "space name.txt", "#hash.txt", "!bang.txt",
    "data/raw/x.csv", "data/keep/y.csv", "x/y/z/deep.bak", "anchored/only.md", "deep/anchored/only.md",
]
ROOT_IGNORE = """
*.pyc
*.log
!keep.log
/top.txt
build/
**/deep/*.tmp
!lib/deep/keep.tmp
node_modules
\\#hash.txt
\\!bang.txt
data/**
!data/keep/
!data/keep/**
*.bak
anchored/only.md
"""


def git_visible(root: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", HOME=str(root), XDG_CONFIG_HOME=str(root / ".no-config"))
    subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True)
    out = subprocess.run(["git", "ls-files", "-o", "--exclude-standard", "-z"], cwd=root, env=env,
                         check=True, capture_output=True).stdout
    return {p for p in out.decode().split("\0") if p}


def test_scan_matches_git(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel in FILES:
        write(root, rel, rel)
    write(root, ".gitignore", ROOT_IGNORE)
    write(root, "src/gen/.gitignore", "*.js\n!manual.js\n")
    expected = git_visible(root)
    write(root, ".git/info/exclude", "space name.txt\n")
    expected.discard("space name.txt")
    rules = CheckpointIgnore(str(root))
    assert set(scan(str(root), rules).files) == expected
    for rel in FILES:
        assert rules.is_ignored(rel) == (rel not in expected), rel


def test_extra_rules_and_skipped_folders(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel in ("secrets/key.pem", "src/a.py", ".state/x", "vendor/.git/config"):
        write(root, rel, "x")
    rules = CheckpointIgnore(str(root), lambda rel: rel == "secrets" or rel.endswith(".pem"), [".state"])
    assert set(scan(str(root), rules).files) == {"src/a.py"}
    assert rules.is_ignored("secrets/key.pem") and rules.is_ignored(".state/x")
    assert rules.is_ignored("vendor/.git/config")


def test_changed_gitignore_is_reread(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, ".gitignore", "*.txt\n")
    rules = CheckpointIgnore(str(root))
    assert rules.is_ignored("a.txt")
    write(root, ".gitignore", "*.md\n")
    assert not rules.is_ignored("a.txt") and rules.is_ignored("a.md")


@pytest.mark.parametrize("lines", [[], ["# only a comment", ""]])
def test_no_patterns_compile_to_nothing(lines: list[str]) -> None:
    assert compile_lines(lines) is None


def test_the_policy_rule_wins_over_a_gitignore_re_include(tmp_path: Path, make_store: StoreFactory) -> None:
    """A file the policy hides from tools must not be copied into the store because a .gitignore
    re-includes it."""
    root = tmp_path / "ws"
    write(root, ".gitignore", "*.env\n!prod.env\n")
    write(root, "prod.env", "SECRET=1\n")
    write(root, "app.py", "x = 1\n")
    policy = PolicyIgnore((".orchestration/ignore",), ("*.env",))
    rules = CheckpointIgnore(str(root), policy.ignores)
    assert rules.is_ignored("prod.env")
    assert set(scan(str(root), rules).files) == {".gitignore", "app.py"}
    store = make_store(root, ignore_rules=lambda: policy)
    assert "prod.env" not in store.create(None, label="baseline").files
    assert dict(store.create(["prod.env"], label="edit").skipped)["prod.env"].startswith("ignored")


def test_ten_thousand_ignore_lines_compile_and_match() -> None:
    """A generated .gitignore of thousands of lines must not break checkpoints."""
    lines = [f"dir{i}/file{i}_*.txt" for i in range(10_000)]
    matcher = compile_lines(lines)
    assert matcher is not None
    assert matcher.check("dir5/file5_a.txt", "file5_a.txt", False) is True
    assert matcher.check("dir5/file6_a.txt", "file6_a.txt", False) is None


def test_no_rule_hides_the_persons_files(tmp_path: Path) -> None:
    """Were they hidden, a rule an agent wrote could hide its change to them from the audit."""
    root = tmp_path / "ws"
    write(root, ".gitignore", ".orchestration/\n.clineignore\n*.yaml\n*.txt\n")
    for rel in (".orchestration/active_intents.yaml", ".orchestration/ignore", ".clineignore",
                "notes.txt"):
        write(root, rel, "x")
    rules = CheckpointIgnore(str(root), lambda rel: rel.startswith(".orchestration"))
    assert set(scan(str(root), rules).files) == {
        ".gitignore", ".orchestration/active_intents.yaml", ".orchestration/ignore", ".clineignore"}
    assert rules.is_ignored("notes.txt") and not rules.is_ignored(".ORCHESTRATION/policy.yaml")


@pytest.mark.timeout(20)
def test_a_rule_file_that_is_a_fifo_is_never_waited_on(ws: Path, make_store: StoreFactory) -> None:
    """A command may leave a FIFO where .gitignore or git's exclude file was: reading it would
    wait for a writer forever, holding the store (every later checkpoint and audit with it)."""
    store = make_store(ws)
    store.create(None, label="baseline")
    (ws / ".gitignore").unlink()
    os.mkfifo(ws / ".gitignore")
    (ws / ".git" / "info").mkdir(parents=True)
    os.mkfifo(ws / ".git" / "info" / "exclude")
    write(ws, "debug.log", "no rule hides it now\n")
    checkpoint = store.create(None, label="after the command")
    assert "debug.log" in checkpoint.files
    assert CheckpointIgnore(str(ws)).matcher_for("") is None
