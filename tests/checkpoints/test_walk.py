"""The full-scan fallback's walk sees exactly what the Python scan sees, whether the native lister
or GNU find lists the tree."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from intentd.daemon.checkpoints import CheckpointStore, listing
from intentd.daemon.checkpoints import walk as walk_module
from intentd.daemon.checkpoints.ignore import CheckpointIgnore
from intentd.daemon.checkpoints.listing import gnu_find, list_records
from intentd.daemon.checkpoints.scan import scan
from intentd.daemon.checkpoints.state import Entry, to_disk_stat
from intentd.daemon.checkpoints.walk import RecordWalker
from intentd.daemon.checkpoints.warmup import list_files

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


@pytest.fixture(params=["native", "find"])
def lister(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each walk test runs with the native lister, and again with GNU find listing."""
    if request.param == "find":
        monkeypatch.setattr(listing, "native", None)
    assert listing.lister() == request.param
    return str(request.param)


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
                               st.size, st.mtime_ns, ino=st.ino))
    return known


def test_the_first_walk_finds_what_the_python_scan_finds(tree: Path, lister: str) -> None:
    rules = rules_for(tree)
    expected = scan(str(tree), rules)
    walk = RecordWalker(str(tree), rules).walk({})
    assert walk is not None
    assert walk.present == set(expected.files)
    assert {"src/a.py", "logs/keep.log", "inner/file.txt", "link", "dirlink",
            "[odd]/f*.txt", "sub/kept.txt"} <= walk.present
    assert not walk.present & {"build/out.o", "keep/build/x.txt", "logs/app.log",
                               "node_modules/m/index.js", "inner/.git/config",
                               "sub/tmp/t.txt", "secret/key.pem", "pipe", "vendor/.git"}
    assert sorted(walk.gitignores) == sorted(expected.gitignores)
    assert set(walk.changed) == walk.present  # nothing recorded yet: every file is to be read


def changes_now(root: Path, rules: CheckpointIgnore,
                known: dict[str, tuple[int, Entry]]) -> tuple[set[str], set[str]]:
    """What a walk must report against known: (changed, gone), from the Python scan."""
    files = scan(str(root), rules).files
    changed = {p for p, st in files.items() if p not in known
               or not to_disk_stat(st).matches(known[p][1])}
    return changed, set(known) - set(files)


@pytest.mark.parametrize("remember", [True, False])
def test_a_later_walk_reports_only_what_changed_and_stays_exact(
        tree: Path, monkeypatch: pytest.MonkeyPatch, remember: bool, lister: str) -> None:
    rules = rules_for(tree)
    walker = RecordWalker(str(tree), rules, remember=remember)
    first = walker.walk({})
    assert first is not None and first.checked
    known = recorded(tree, first.present)
    walker.recorded(known)  # the store tells the walker what its checkpoint recorded
    assert walker.walk(known) is not None  # settles what the first walk could not vouch for
    write(tree, "src/a.py", "changed, and longer\n")
    write(tree, "src/new/c.py")
    write(tree, "build/more.o")          # in a folder the last walk found ignored
    write(tree, "node_modules/n/x.js")
    write(tree, "fresh/dir/f.txt")       # a new folder
    (tree / "src/deep/b.py").unlink()
    os.chmod(tree / "sub/kept.txt", 0o600)
    looked_at: list[str] = []
    real_lstat = walk_module.lstat
    monkeypatch.setattr(walk_module, "lstat", lambda p: looked_at.append(p) or real_lstat(p))
    walk = walker.walk(known)
    assert walk is not None
    assert (set(walk.changed), walk.gone) == changes_now(tree, rules, known)
    assert set(walk.changed) == {"src/a.py", "src/new/c.py", "sub/kept.txt", "fresh/dir/f.txt"}
    assert walk.gone == {"src/deep/b.py"}
    # find's text vouched for every unchanged file and link: only the rest was lstat'ed again
    # (and, by a walk that checks everything, each .gitignore, for the rules' fingerprint)
    again = {"src/a.py", "src/new/c.py", "sub/kept.txt", "fresh/dir/f.txt"}
    if not remember:
        again |= {".gitignore", "sub/.gitignore"}
    assert sorted(os.path.relpath(p, tree) for p in looked_at) == sorted(again)
    assert walk.checked is not remember  # a remembering walker looked only at what differs


def settled_walker(tree: Path, rules: CheckpointIgnore
                   ) -> tuple[RecordWalker, dict[str, tuple[int, Entry]]]:
    """A remembering walker whose first walk was recorded (as the store does) and settled by a
    second: the next walk looks only at what differs."""
    walker = RecordWalker(str(tree), rules)
    first = walker.walk({})
    assert first is not None
    known = recorded(tree, first.present)
    walker.recorded(known)
    assert walker.walk(known) is not None  # settles what the first walk could not vouch for
    return walker, known


def test_a_remembering_walk_looks_again_at_what_the_store_recorded(tree: Path) -> None:
    rules = rules_for(tree)
    walker, known = settled_walker(tree, rules)
    # A file tool's checkpoint recorded a file while it was being written (its stat cache
    # vouches for nothing), and another that was then deleted before the next walk.
    seq, entry = known["src/a.py"]
    known["src/a.py"] = (seq, Entry(entry.kind, entry.sha, entry.perm, entry.size, -1))
    write(tree, "made/by/tool.txt")
    known["made/by/tool.txt"] = recorded(tree, ["made/by/tool.txt"])["made/by/tool.txt"]
    walker.recorded(["src/a.py", "made/by/tool.txt"])
    (tree / "made/by/tool.txt").unlink()
    walk = walker.walk(known)
    assert walk is not None and not walk.checked
    assert set(walk.changed) == {"src/a.py"}
    assert walk.gone == {"made/by/tool.txt"}
    assert (set(walk.changed), walk.gone) == changes_now(tree, rules, known)


def test_walk_after_walk_stays_exact_through_edits_creations_and_deletions(
        tree: Path, lister: str) -> None:
    rules = rules_for(tree)
    walker, known = settled_walker(tree, rules)
    steps = [
        lambda: (write(tree, "src/a.py", "edited\n"), write(tree, "inner/file.txt", "e\n")),
        lambda: write(tree, "src/deep/new.py"),  # a file added: its folder's record stays
        lambda: (tree / "src/deep/b.py").unlink(),
        lambda: (write(tree, "src/a.py", "again\n"), (tree / "sub/kept.txt").unlink()),
        lambda: None,
    ]
    for step in steps:
        step()
        walk = walker.walk(known)
        assert walk is not None and not walk.checked
        assert (set(walk.changed), walk.gone) == changes_now(tree, rules, known)
        for rel in walk.gone:  # the store records what the walk reported, and says so
            del known[rel]
        known.update(recorded(tree, walk.changed))
        walker.recorded([*walk.changed, *walk.gone])
    assert not walk.changed and not walk.gone


def test_a_reset_walker_checks_everything_again(tree: Path) -> None:
    rules = rules_for(tree)
    walker = RecordWalker(str(tree), rules)
    first = walker.walk({})
    assert first is not None
    walker.reset()
    known = recorded(tree, first.present)
    walk = walker.walk(known)
    assert walk is not None and walk.checked
    assert walk.present == first.present and not walk.changed and not walk.gone


@pytest.mark.parametrize("remember", [True, False])
def test_a_changed_rule_is_checked_against_every_file_again(tree: Path, remember: bool) -> None:
    hidden = {"secret"}
    rules = rules_for(tree, hidden)
    walker = RecordWalker(str(tree), rules, remember=remember)
    first = walker.walk({})
    assert first is not None
    known = recorded(tree, first.present)
    hidden.clear()  # the person's policy no longer hides secret/
    hidden.add("src")  # and now hides src/
    walk = walker.walk(known)
    assert walk is not None and walk.checked
    assert walk.present == set(scan(str(tree), rules).files)
    assert "secret/key.pem" in walk.present and "src/a.py" not in walk.present
    assert "secret/key.pem" in walk.changed and "src/a.py" in walk.gone
    assert walker.walk(recorded(tree, walk.present)) is not None
    write(tree, ".gitignore", "*.txt\n")  # a .gitignore edit changes the rules too
    again = walker.walk(recorded(tree, walk.present))
    assert again is not None and again.checked
    assert again.present == set(scan(str(tree), rules).files)
    assert "build/out.o" in again.present and "sub/kept.txt" not in again.present


def test_with_nothing_to_list_the_tree_the_store_scans_in_python(
        tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "native", None)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    gnu_find.cache_clear()
    try:
        assert gnu_find() is None and listing.lister() is None
        assert list_records(str(tree), ["src"], []) is None
        with CheckpointStore(tree, tmp_path / "state", watch=False) as store:
            store.create(None, label="baseline")
            write(tree, "src/a.py", "edited\n")
            assert store.create(None, label="next").files == ("src/a.py",)
    finally:
        monkeypatch.undo()
        gnu_find.cache_clear()


def test_the_store_finds_changes_through_the_listing(tree: Path, tmp_path: Path, lister: str) -> None:
    with CheckpointStore(tree, tmp_path / "state", watch=False) as store:
        store.create(None, label="baseline")
        write(tree, "src/a.py", "edited\n")
        write(tree, "build/ignored.o")
        (tree / "sub/kept.txt").unlink()
        cp = store.create(None, label="next")
        assert set(cp.files) == {"src/a.py", "sub/kept.txt"}
        assert cp.coverage.startswith("full scan")
        assert store.create(None, label="idle").files == ()


def listed(root: Path, pruned: list[str]) -> list[str]:
    names = sorted(n for n in os.listdir(root) if n != ".git" and n not in pruned)
    records = list_records(str(root), names, pruned)
    assert records is not None
    return records


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the native lister is Linux's")
def test_the_native_lister_is_built_on_linux() -> None:
    assert listing.native is not None, (
        "the native lister was not built: installing needs a C compiler and Python's headers")


def test_the_native_lister_lists_what_find_lists(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tree, "deep/er/and/deeper/f.txt")
    write(tree, "deep/er/.git/objects/x")  # a nested repository's folder, left out whole
    write(tree, "spaced name/new\nline.txt")
    (tree / "src/deep/empty").mkdir()
    (tree / "src/deep/dangling").symlink_to("nowhere")
    os.chmod(tree / "src/a.py", 0o4751)
    if listing.native is None:
        pytest.fail("the native lister was not built")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tree / "sock"))
        for pruned in ([], ["build", "node_modules", "sub/tmp", "[odd]"]):
            native = listed(tree, pruned)
            monkeypatch.setattr(listing, "native", None)
            by_find = listed(tree, pruned)
            monkeypatch.undo()
            assert native == by_find  # record for record, in the same order
            paths = [r.partition(" ./")[2] for r in native]
            assert "sock" in paths and "pipe" in paths and "src/deep/dangling" in paths
            assert not [p for p in paths if ".git" in p.split("/")]
            assert not [p for p in paths for gone in pruned if (p + "/").startswith(gone + "/")]
            # a folder's contents come right after it, as the ignore check expects
            for at, record in enumerate(native):
                if record.startswith("d "):
                    inside = [r for r in native if r.partition(" ./")[2].startswith(
                        record.partition(" ./")[2] + "/")]
                    assert native[at + 1: at + 1 + len(inside)] == inside


def test_a_tree_too_deep_for_the_native_lister_is_listed_by_find(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each open folder holds a descriptor: past 128 levels the native lister stops (an agent
    could nest folders until the daemon has none left) and GNU find lists the tree whole."""
    if listing.native is None:
        pytest.fail("the native lister was not built")
    root = tmp_path / "ws"
    deep = root.joinpath(*["d"] * 150)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("x")
    with pytest.raises(OSError):
        listing.native.listing(str(root), ["d"], [])
    records = listed(root, [])
    assert records[-1].endswith("/d/f.txt") and len(records) == 151
    monkeypatch.setattr(listing, "native", None)
    assert listed(root, []) == records


def test_a_failing_native_lister_hands_the_listing_to_find(tree: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_descriptors(root: str, names: list[str], pruned: list[str], since: int,
                           recent: int) -> bytes:
        raise OSError(24, "Too many open files")

    expected = listed(tree, [])
    monkeypatch.setattr(listing, "native", SimpleNamespace(listing=out_of_descriptors))
    assert sorted(listed(tree, [])) == sorted(expected)
    monkeypatch.setattr(listing, "gnu_find", lambda: None)
    assert list_records(str(tree), ["src"], []) is None  # never half a listing


def test_the_warm_up_lists_the_files_the_full_scan_finds(tree: Path) -> None:
    rules = rules_for(tree)
    listing, total = list_files(str(tree), rules)
    names = {prefix + name for prefix, joined in listing for name in joined.split("/")}
    assert names == set(scan(str(tree), rules).files) and total == len(names)
    assert "src/a.py" in names and "secret/key.pem" not in names and "pipe" not in names
