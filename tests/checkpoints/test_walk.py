"""The find-based walk of the full-scan fallback sees exactly what the Python scan sees."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore
from intentd.daemon.checkpoints import walk as walk_module
from intentd.daemon.checkpoints.ignore import CheckpointIgnore
from intentd.daemon.checkpoints.scan import scan
from intentd.daemon.checkpoints.state import Entry, to_disk_stat
from intentd.daemon.checkpoints.walk import FindWalker, gnu_find

pytestmark = pytest.mark.skipif(gnu_find() is None, reason="needs GNU find")


def write(root: Path, rel: str, text: str = "x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel in ["src/a.py", "src/deep/b.py", "build/out.o", "keep/build/x.txt", "logs/app.log",
                "logs/keep.log", "node_modules/m/index.js", "sub/.gitignore", "sub/tmp/t.txt",
                "sub/kept.txt", "vendor/.git", "vendor/code.c", "secret/key.pem", "[odd]/f*.txt"]:
        write(root, rel)
    write(root, ".gitignore", "build/\n*.log\n!logs/keep.log\nnode_modules/\n")
    write(root, "sub/.gitignore", "tmp/\n")
    write(root, ".git/HEAD", "ref: refs/heads/main\n")
    write(root, "inner/.git/config", "[core]\n")
    write(root, "inner/file.txt")
    (root / "link").symlink_to("src/a.py")
    (root / "dirlink").symlink_to("src")
    os.mkfifo(root / "pipe")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name")
    return root


def rules_for(root: Path, extra: set[str] | None = None) -> CheckpointIgnore:
    hidden = extra if extra is not None else {"secret"}
    return CheckpointIgnore(str(root), lambda rel: rel.split("/")[0] in hidden, [".state"],
                            lambda: ",".join(sorted(hidden)))


def recorded(root: Path, paths: Iterator[str] | set[str]) -> dict[str, tuple[int, Entry]]:
    """A stat cache as the store keeps it, for every path given, as it is on disk now."""
    known = {}
    for rel in paths:
        st = to_disk_stat(os.lstat(root / rel))
        known[rel] = (1, Entry("link" if st.kind == "link" else "file", "0" * 40, st.perm,
                               st.size, st.mtime_ns))
    return known


def test_the_first_walk_finds_what_the_python_scan_finds(tree: Path) -> None:
    rules = rules_for(tree)
    expected = scan(str(tree), rules)
    walk = FindWalker(str(tree), rules).walk({})
    assert walk is not None
    assert walk.present == set(expected.files)
    assert {"src/a.py", "logs/keep.log", "inner/file.txt", "link", "dirlink",
            "[odd]/f*.txt", "sub/kept.txt"} <= walk.present
    assert not walk.present & {"build/out.o", "keep/build/x.txt", "logs/app.log",
                               "node_modules/m/index.js", "inner/.git/config",
                               "sub/tmp/t.txt", "secret/key.pem", "pipe", "vendor/.git"}
    assert sorted(walk.gitignores) == sorted(expected.gitignores)
    assert set(walk.changed) == walk.present  # nothing recorded yet: every file is to be read


@pytest.mark.parametrize("remember", [True, False])
def test_a_later_walk_reports_only_what_changed_and_stays_exact(
        tree: Path, monkeypatch: pytest.MonkeyPatch, remember: bool) -> None:
    rules = rules_for(tree)
    walker = FindWalker(str(tree), rules, remember=remember)
    first = walker.walk({})
    assert first is not None
    known = recorded(tree, first.present)
    write(tree, "src/a.py", "changed, and longer\n")
    write(tree, "src/new/c.py")
    write(tree, "build/more.o")          # in a folder the last walk found ignored
    write(tree, "node_modules/n/x.js")
    (tree / "src/deep/b.py").unlink()
    os.chmod(tree / "sub/kept.txt", 0o600)
    looked_at: list[str] = []
    real_lstat = walk_module.lstat
    monkeypatch.setattr(walk_module, "lstat", lambda p: looked_at.append(p) or real_lstat(p))
    walk = walker.walk(known)
    assert walk is not None
    # find's text vouched for every unchanged file and link: only the rest was lstat'ed again
    assert sorted(os.path.relpath(p, tree) for p in looked_at) == [
        ".gitignore", "src/a.py", "src/new/c.py", "sub/.gitignore", "sub/kept.txt"]
    assert walk.present == set(scan(str(tree), rules).files)
    assert set(walk.changed) == {"src/a.py", "src/new/c.py", "sub/kept.txt"}
    assert "src/deep/b.py" not in walk.present


@pytest.mark.parametrize("remember", [True, False])
def test_a_changed_rule_is_checked_against_every_file_again(tree: Path, remember: bool) -> None:
    hidden = {"secret"}
    rules = rules_for(tree, hidden)
    walker = FindWalker(str(tree), rules, remember=remember)
    first = walker.walk({})
    assert first is not None
    known = recorded(tree, first.present)
    hidden.clear()  # the person's policy no longer hides secret/
    hidden.add("src")  # and now hides src/
    walk = walker.walk(known)
    assert walk is not None
    assert walk.present == set(scan(str(tree), rules).files)
    assert "secret/key.pem" in walk.present and "src/a.py" not in walk.present
    write(tree, ".gitignore", "*.txt\n")  # a .gitignore edit changes the rules too
    again = walker.walk(recorded(tree, walk.present))
    assert again is not None
    assert again.present == set(scan(str(tree), rules).files)
    assert "build/out.o" in again.present and "sub/kept.txt" not in again.present


def test_without_gnu_find_the_store_scans_in_python(tree: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    gnu_find.cache_clear()
    try:
        assert gnu_find() is None
        with CheckpointStore(tree, tmp_path / "state", watch=False) as store:
            store.create(None, label="baseline")
            write(tree, "src/a.py", "edited\n")
            assert store.create(None, label="next").files == ("src/a.py",)
    finally:
        monkeypatch.undo()
        gnu_find.cache_clear()


def test_the_store_finds_changes_through_find(tree: Path, tmp_path: Path) -> None:
    with CheckpointStore(tree, tmp_path / "state", watch=False) as store:
        store.create(None, label="baseline")
        write(tree, "src/a.py", "edited\n")
        write(tree, "build/ignored.o")
        (tree / "sub/kept.txt").unlink()
        cp = store.create(None, label="next")
        assert set(cp.files) == {"src/a.py", "sub/kept.txt"}
        assert cp.coverage.startswith("full scan")
        assert store.create(None, label="idle").files == ()
