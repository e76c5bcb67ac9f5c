"""The packed known state: every entry comes back as it went in, whatever its kind or folder."""

from __future__ import annotations

import random
import sqlite3
import sys
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import known as known_module
from intentd.daemon.checkpoints.errors import CorruptStore
from intentd.daemon.checkpoints.known import SMALL, Known, from_mapping
from intentd.daemon.checkpoints.manifest import Manifest
from intentd.daemon.checkpoints.state import ABSENT, Entry

SHA = "0123456789abcdef0123456789abcdef01234567"
KINDS = {
    "src/app.py": (3, Entry("file", SHA, 0o644, 120, 1_700_000_000_123_456_789)),
    "bin/run": (4, Entry("file", "f" * 40, 0o755, 0, -1)),  # racily recorded: no stat cache
    "link": (5, Entry("link", "a" * 40, 0, 11, 1_600_000_000_000_000_001)),
    "gone/old.txt": (6, ABSENT),
    "big.bin": (7, Entry("skipped", "", 0o600, 9 * 2**20, 1_500_000_000_000_000_000,
                         "over 5 MiB size cap")),
    "odd/sha.txt": (8, Entry("file", "ABC", 0o644, 1, 2)),          # not a 40-digit sha
    "odd/upper.txt": (9, Entry("file", SHA.upper(), 0o644, 1, 2)),  # hex, but not as stored
    "odd/spaced.txt": (9, Entry("file", "ab " * 13 + "a", 0o644, 1, 2)),  # hex to bytes.fromhex
    "digits.txt": (9, Entry("file", "0123456789" * 4, 0o644, 1, 2)),  # packed, no letters at all
    "odd/huge.txt": (10, Entry("file", SHA, 0o644, 2**70, 2)),      # past what a record holds
    "odd/perm.txt": (11, Entry("file", SHA, 2**20, 1, 2)),
    "odd/kind.txt": (12, Entry("dir", SHA, 0, 1, 2)),  # type: ignore[arg-type]
    "absent-with-note": (13, Entry("absent", "", 0, -1, -1, "a note")),
    "deep/a/b/c/d/e.txt": (2**40, Entry("file", SHA, 0o644, 5, 6)),
    "名前/ファイル.txt": (14, Entry("file", SHA, 0o644, 7, 8)),
}


def test_every_kind_of_entry_comes_back_as_it_went_in() -> None:
    known = from_mapping(KINDS)
    assert len(known) == len(KINDS)
    assert dict(known.items()) == KINDS
    for path, value in KINDS.items():
        assert known[path] == value and known.get(path) == value and path in known
    assert known.get("link") == (5, Entry("link", "a" * 40, 0, 11, 1_600_000_000_000_000_001))
    assert known.get("gone/old.txt", None) == (6, ABSENT)
    for missing in ("src", "src/", "src/app", "app.py", "src/app.py/x", "", "/", "odd/sha",
                    "gone/old.txt/", "deep/a/b/c/d"):
        assert missing not in known and known.get(missing) is None
        with pytest.raises(KeyError):
            known[missing]
    assert known.get("nope", (0, ABSENT)) == (0, ABSENT)
    assert 42 not in known  # type: ignore[comparison-overlap]


def test_updates_replace_and_refreshes_keep_the_seq() -> None:
    known = from_mapping(KINDS)
    known.set("src/app.py", 20, ABSENT)  # deleted
    known.set("big.bin", 21, Entry("file", "b" * 40, 0o644, 3, 4))  # note dropped with the skip
    known.set("odd/sha.txt", 22, Entry("file", SHA, 0o644, 1, 2))  # now fits a record
    known.set("bin/run", 23, Entry("skipped", "", 0o755, 1, 1, "unreadable: denied"))
    known.refresh("link", 99, 1_800_000_000_000_000_000, 7)
    known.refresh("odd/huge.txt", 5, 6, 2**63 - 1)
    known.refresh("bin/run", 2, 3, -5)  # an inode number past 2**63, as SQLite keeps it
    expect = dict(KINDS)
    expect["src/app.py"] = (20, ABSENT)
    expect["big.bin"] = (21, Entry("file", "b" * 40, 0o644, 3, 4))
    expect["odd/sha.txt"] = (22, Entry("file", SHA, 0o644, 1, 2))
    expect["bin/run"] = (23, Entry("skipped", "", 0o755, 2, 3, "unreadable: denied", -5))
    expect["link"] = (5, Entry("link", "a" * 40, 0, 99, 1_800_000_000_000_000_000, ino=7))
    expect["odd/huge.txt"] = (10, Entry("file", SHA, 0o644, 5, 6, ino=2**63 - 1))
    assert dict(known.items()) == expect and len(known) == len(KINDS)
    with pytest.raises(KeyError):
        known.refresh("never/seen.txt", 1, 2, 3)
    with pytest.raises(ValueError):
        known.set("folder/", 1, ABSENT)


def test_a_large_folder_and_many_folders_keep_every_entry_apart() -> None:
    """Past SMALL names a folder keeps an index; entries of look-alike names never mix."""
    rng = random.Random(7)
    values: dict[str, tuple[int, Entry]] = {}
    names = [f"f{i}" for i in range(SMALL * 3)] + ["f", "f1.", ".f1", "f1 ", "1"]
    for folder in ("", "big", "big/f1", "x/big"):
        for name in names:
            path = f"{folder}/{name}" if folder else name
            sha = f"{rng.getrandbits(160):040x}"
            values[path] = (rng.randrange(1, 10**6), Entry("file", sha, 0o644,
                                                           rng.randrange(10**9), rng.randrange(10**18)))
    known = Known()
    for path, (seq, entry) in values.items():
        known.set(path, seq, entry)
    for path in rng.sample(sorted(values), 50):  # updated in place, in both kinds of folder
        seq, entry = values[path]
        values[path] = (seq + 1, entry._replace(sha="c" * 40))
        known.set(path, seq + 1, values[path][1])
    assert len(known) == len(values) and sorted(known) == sorted(values)
    for path, value in values.items():
        assert known[path] == value, path
    assert sorted(known.under(["big"])) == sorted(p for p in values if p.startswith("big/"))
    assert sorted(known.under(["big/f1", "x"])) == sorted(
        p for p in values if p.startswith(("big/f1/", "x/")))
    assert sorted(known.under([""])) == sorted(values)


def test_the_manifest_builds_it_from_every_paths_latest_entry(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "m.sqlite3", "/ws")
    rows = [("a.txt", 1, "file", SHA, 0o644, 1, 2, "", 5),
            ("a.txt", 3, "absent", "", 0, -1, -1, "", 0),
            ("b/c.txt", 2, "skipped", "", 0o600, 9, 9, "too big", 12),
            ("b/c.txt", 1, "file", "e" * 40, 0o644, 1, 1, "", 11)]
    with manifest.transaction() as db:
        db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    assert dict(manifest.known().items()) == {
        "a.txt": (3, ABSENT), "b/c.txt": (2, Entry("skipped", "", 0o600, 9, 9, "too big", 12))}
    with manifest.transaction() as db:  # a damaged row is a corrupt store, not a crash
        db.execute("INSERT INTO entries VALUES ('d', 'x', 'file', '', 0, 0, 0, '', 0)")
    with pytest.raises(CorruptStore):
        manifest.known()
    manifest.close()
    assert sqlite3.connect(tmp_path / "m.sqlite3").execute("SELECT 1").fetchone() == (1,)


def test_packed_and_unpacked_it_holds_the_same_and_still_changes() -> None:
    known = from_mapping(KINDS)
    for i in range(SMALL * 2):  # a folder past SMALL, with its index
        known.set(f"many/f{i}", i, Entry("file", SHA, 0o644, i, i))
    copy = Known.unpacked(known.packed())
    assert dict(copy.items()) == dict(known.items()) and len(copy) == len(known)
    copy.set("many/f3", 99, ABSENT)
    copy.set("many/new", 100, ABSENT)
    copy.refresh("odd/huge.txt", 1, 1, 0)
    copy.refresh("big.bin", 5, 5, 0)
    assert copy["many/f3"] == (99, ABSENT) and copy["many/new"] == (100, ABSENT)
    assert copy["odd/huge.txt"] == (10, KINDS["odd/huge.txt"][1]._replace(size=1, mtime_ns=1))
    assert copy["big.bin"][1].note == "over 5 MiB size cap" and copy["big.bin"][1].size == 5
    assert known["many/f3"] == (3, Entry("file", SHA, 0o644, 3, 3))  # the original is apart


def test_a_chunk_of_records_is_a_small_object() -> None:
    """Chunks past CPython's small-object limit come from the C heap, which a full scan's
    garbage keeps from going back to the system: the daemon stayed 11 MiB bigger at 500k files
    when the inode number made ten records too many for one."""
    full = bytes(known_module.CHUNK * known_module._SIZE)
    assert sys.getsizeof(full) <= 512
