"""Kept texts are written off the answer path, yet none is lost: readable while waiting, every
one in the store's database after a clean stop (a batch per transaction, no file per text), and
a report reads the written file once. A full disk or a damaged database costs traces, never a
call; texts kept by earlier versions, one file each, are still read."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace
from intentd.daemon.trace import contents, texts_db
from intentd.daemon.trace.contents import ContentStore
from intentd.daemon.trace.recording import contents_dir
from tests.trace.conftest import EDITS_UNASKED

DATABASE_FILES = {"texts.sqlite3", "texts.sqlite3-wal", "texts.sqlite3-shm"}


def on_disk(folder: Path, digest: str) -> bytes | None:
    """The text as another program finds it in the database: committed, or absent."""
    db = sqlite3.connect(f"file:{folder / 'texts.sqlite3'}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT data FROM texts WHERE digest = ?", (digest,)).fetchone()
    finally:
        db.close()
    return zlib.decompress(row[0]) if row else None


def files_in(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir()}


def texts(count: int, tag: str = "") -> tuple[list[bytes], list[str]]:
    made = [f"{tag}line {n}\n".encode() * 50 for n in range(count)]
    return made, [hashlib.sha256(t).hexdigest() for t in made]


def waiting(store: ContentStore, count: int) -> tuple[threading.Lock, list[bytes], list[str]]:
    """`count` texts put while the writer is held: the gate that releases it, texts, digests."""
    gate = held(store)
    made, digests = texts(count)
    for digest, text in zip(digests, made, strict=True):
        store.put(digest, text)
    return gate, made, digests


def held(store: ContentStore) -> threading.Lock:
    """The writer waits at its first batch until the test releases the returned lock."""
    gate = threading.Lock()
    gate.acquire()
    write = store._write

    def held_write(batch: list[tuple[str, bytes]]) -> None:
        with gate:
            write(batch)

    store._write = held_write  # type: ignore[method-assign]
    return gate


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SQL statement the stores' connections run, in order."""
    seen: list[str] = []
    real = texts_db._open

    def traced(path: Path) -> sqlite3.Connection:
        db = real(path)
        db.set_trace_callback(seen.append)
        return db

    monkeypatch.setattr(texts_db, "_open", traced)
    return seen


def test_a_waiting_text_reads_from_memory_and_close_writes_it(tmp_path: Path) -> None:
    folder = tmp_path / "contents"
    store = ContentStore(folder, background=True)
    gate, made, digests = waiting(store, 20)
    assert not folder.exists()  # none written yet: the call did not wait
    assert [store.get(d) for d in digests] == made  # yet each reads back, from memory
    gate.release()
    store.close()
    assert [on_disk(folder, d) for d in digests] == made
    assert files_in(folder) <= DATABASE_FILES  # one database, not a file per text
    assert stat.S_IMODE(os.stat(folder / "texts.sqlite3").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert ContentStore(folder).get(digests[-1]) == made[-1]


def test_the_writer_writes_all_that_waits_in_one_transaction(tmp_path: Path,
                                                             statements: list[str]) -> None:
    folder = tmp_path / "contents"
    store = ContentStore(folder, background=True)
    gate, made, digests = waiting(store, 50)
    gate.release()
    assert store.flush(timeout=10)
    # the writer took what waited when it woke (perhaps only the first text), then the rest
    assert 1 <= statements.count("COMMIT") <= 2, statements
    assert [on_disk(folder, d) for d in digests] == made
    store.close()


def test_a_burst_of_texts_waits_for_one_wake_and_one_transaction(
        tmp_path: Path, statements: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Woken for every text, the writer took the interpreter lock from the calls each time; it
    # lets a burst gather, and flush() (as a stop does) does not wait out that time.
    monkeypatch.setattr(contents, "LINGER_SECONDS", 60.0)
    folder = tmp_path / "contents"
    store = ContentStore(folder, background=True)
    made, digests = texts(30)
    for digest, text in zip(digests, made, strict=True):
        store.put(digest, text)
    assert store.flush(timeout=10)
    assert statements.count("COMMIT") == 1, statements
    assert [on_disk(folder, d) for d in digests] == made
    store.close()


def test_another_process_reads_what_the_writer_committed(tmp_path: Path) -> None:
    folder = tmp_path / "contents"
    reader = ContentStore(folder)  # as `intentd trace blame` next to a running daemon
    made, digests = texts(5)
    assert reader.get(digests[0]) is None
    assert not folder.exists()  # a reader makes neither the folder nor a database
    writer = ContentStore(folder, background=True)
    for digest, text in zip(digests, made, strict=True):
        writer.put(digest, text)
    assert writer.flush(timeout=10)  # written, the writer's connection still open
    assert reader.get(digests[0]) == made[0]
    script = ("import sys; from pathlib import Path; "
              "from intentd.daemon.trace.contents import ContentStore; "
              "store = ContentStore(Path(sys.argv[1])); "
              "sys.stdout.buffer.write(b''.join(store.get(d) or b'?' for d in sys.argv[2:]))")
    found = subprocess.run([sys.executable, "-c", script, str(folder), *digests],
                           capture_output=True, check=True, timeout=60).stdout
    assert found == b"".join(made)
    writer.close()


def test_texts_kept_one_file_each_by_earlier_versions_are_still_read(tmp_path: Path) -> None:
    folder = tmp_path / "contents"
    made, digests = texts(2, "old ")
    for digest, text in zip(digests, made, strict=True):
        (folder / digest[:2]).mkdir(parents=True, exist_ok=True)
        (folder / digest[:2] / digest[2:]).write_bytes(zlib.compress(text))
    store = ContentStore(folder)
    new, (digest,) = texts(1, "new ")
    store.put(digest, new[0])  # the database beside the old files
    assert [store.get(d) for d in digests] == made
    assert ContentStore(folder).get(digests[1]) == made[1]
    assert ContentStore(folder).get(digest) == new[0]
    (folder / digests[0][:2] / digests[0][2:]).write_bytes(zlib.compress(b"changed since"))
    assert ContentStore(folder).get(digests[0]) is None  # not the text its name promises
    assert ContentStore(folder).get("../" * 20 + "etc/passwd") is None


def test_a_row_that_does_not_match_its_digest_reads_as_missing(tmp_path: Path) -> None:
    folder = tmp_path / "contents"
    made, (digest,) = texts(1)
    ContentStore(folder).put(digest, made[0])
    with sqlite3.connect(folder / "texts.sqlite3") as db:
        db.execute("UPDATE texts SET data = ?", (zlib.compress(b"something else"),))
    db.close()
    assert ContentStore(folder).get(digest) is None


def test_a_damaged_database_is_moved_aside_and_a_new_one_started(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "contents"
    folder.mkdir()
    garbage = b"these bytes are no SQLite database\n" * 200
    (folder / "texts.sqlite3").write_bytes(garbage)
    made, digests = texts(3)
    assert ContentStore(folder).get(digests[0]) is None  # a reader leaves it where it is
    assert files_in(folder) == {"texts.sqlite3"}
    store = ContentStore(folder, background=True)  # the daemon's
    with caplog.at_level(logging.ERROR, logger=texts_db.__name__):
        for digest, text in zip(digests, made, strict=True):
            store.put(digest, text)
        assert store.flush(timeout=10)
    aside = [p for p in folder.iterdir() if p.name.endswith(".damaged")]
    assert len(aside) == 1 and aside[0].read_bytes() == garbage  # kept for a person to look at
    assert "damaged" in caplog.text and aside[0].name in caplog.text
    assert [ContentStore(folder).get(d) for d in digests] == made
    store.put(hashlib.sha256(b"later\n").hexdigest(), b"later\n")  # the writer lives on
    store.close()
    assert on_disk(folder, hashlib.sha256(b"later\n").hexdigest()) == b"later\n"


def test_a_full_disk_costs_the_trace_of_the_text_never_the_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "contents"
    full = {"on": True}
    real = texts_db._open

    def small_disk(path: Path) -> sqlite3.Connection:
        db = real(path)
        if full["on"]:  # no page beyond those the empty table takes: SQLite's own SQLITE_FULL
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {pages}")
        return db

    monkeypatch.setattr(texts_db, "_open", small_disk)
    store = ContentStore(folder)  # writes at once: the error would reach the caller
    big = [os.urandom(64 * 1024).hex().encode() for _ in range(3)]
    lost = [hashlib.sha256(b).hexdigest() for b in big]
    with caplog.at_level(logging.WARNING, logger=texts_db.__name__):
        for digest, text in zip(lost, big, strict=True):
            store.put(digest, text)  # does not raise
    assert caplog.text.count("database or disk is full") == 1  # said once, not per text
    assert store.get(lost[0]) == big[0]  # the call's own diff still has it, in memory
    assert [ContentStore(folder).get(d) for d in lost] == [None] * 3
    store.close()
    full["on"] = False  # room again
    store.put(lost[0], big[0])
    assert ContentStore(folder).get(lost[0]) == big[0]


def test_a_full_queue_makes_put_write_itself(tmp_path: Path) -> None:
    folder = tmp_path / "contents"
    store = ContentStore(folder, background=True)
    store._writer = threading.Thread(target=lambda: None)  # a writer that never drains
    text = b"x\n" * (contents.PENDING_BYTES // 4 + 1)  # over half the bound
    first, second = hashlib.sha256(text).hexdigest(), hashlib.sha256(text + b"y").hexdigest()
    store.put(first, text)  # queued
    store.put(second, text + b"y")  # past the bound: written by the caller
    assert on_disk(folder, first) is None and on_disk(folder, second) == text + b"y"


def test_every_text_a_receipt_names_is_kept_after_a_clean_stop(short_dir: Path,
                                                               tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", make_intent(owned_scope=["**"]), policy=EDITS_UNASKED,
                        files={"src/app.py": "start\n"})
    folder = contents_dir(ws.resolve(), short_dir / "state" / "intentd")
    folder.mkdir(parents=True)
    (folder / "texts.sqlite3").write_bytes(b"left damaged by a crash\n" * 100)
    daemon = DaemonProcess(short_dir / "d.sock", short_dir / "state").start()
    try:
        with Client(daemon.socket_path, timeout=20) as client:
            client.initialize("kept-texts")
            session = client.call(protocol.SESSIONS_OPEN, {"workspace": str(ws)})["session_id"]
            client.call(protocol.INTENTS_SELECT, {"session_id": session, "intent_id": "INT-1"})
            for n in range(30):
                path = f"src/f{n % 3}.py"
                answer = client.call(protocol.TOOLS_AUTHORIZE, {
                    "session_id": session, "tool": "write_to_file",
                    "args": {"path": path, "content": f"v{n}\n"}})
                assert answer["decision"] == "allow", answer
                (ws / path).write_text(f"{n}\n" * (n + 1))
                client.call(protocol.TOOLS_REPORT, {"session_id": session,
                                                    "call_id": answer["call_id"], "ok": True})
    finally:
        assert daemon.stop() == 0
    state = next((short_dir / "state").rglob("ledger.jsonl")).parent
    assert state / "contents" == folder
    damaged = {p.name for p in folder.iterdir() if p.name.endswith(".damaged")}
    assert len(damaged) == 1  # moved aside, the daemon went on with a new database
    assert files_in(folder) <= DATABASE_FILES | damaged  # and made no file per text
    entries = [json.loads(line) for line in (state / "ledger.jsonl").open()]
    receipts = [e["receipt"] for e in entries
                if e.get("phase") != "intent" and e["intent"]["tool"] == "write_to_file"]
    assert len(receipts) == 30
    for receipt in receipts:
        (path, after), = receipt["files_after"].items()
        assert receipt["lines"], receipt  # the hunks were traced from the texts in memory
        kept = on_disk(state / "contents", after)
        assert kept is not None and hashlib.sha256(kept).hexdigest() == after
