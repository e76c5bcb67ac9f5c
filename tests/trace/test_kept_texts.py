"""Kept texts are written off the answer path, yet none is lost: readable while waiting, every
one on disk after a clean stop, and a report reads the written file once."""

from __future__ import annotations

import hashlib
import json
import threading
import zlib
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace
from intentd.daemon.trace import contents
from intentd.daemon.trace.contents import ContentStore
from tests.trace.conftest import EDITS_UNASKED


def on_disk(folder: Path, digest: str) -> bytes | None:
    try:
        return zlib.decompress((folder / digest[:2] / digest[2:]).read_bytes())
    except FileNotFoundError:
        return None


def test_a_waiting_text_reads_from_memory_and_close_writes_it(tmp_path: Path) -> None:
    folder = tmp_path / "contents"
    store = ContentStore(folder, background=True)
    gate = threading.Lock()
    gate.acquire()  # the writer waits at its first text until the test lets it go
    write = store._write

    def held_write(digest: str, data: bytes) -> None:
        with gate:
            write(digest, data)

    store._write = held_write  # type: ignore[method-assign]
    texts = [f"line {n}\n".encode() * 50 for n in range(20)]
    digests = [hashlib.sha256(t).hexdigest() for t in texts]
    for digest, text in zip(digests, texts, strict=True):
        store.put(digest, text)
    assert all(on_disk(folder, d) is None for d in digests)  # none written yet: the call did not wait
    assert [store.get(d) for d in digests] == texts  # yet each reads back, from memory
    gate.release()
    store.close()
    assert [on_disk(folder, d) for d in digests] == texts
    assert ContentStore(folder).get(digests[-1]) == texts[-1]  # another process's view


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
    entries = [json.loads(line) for line in (state / "ledger.jsonl").open()]
    receipts = [e["receipt"] for e in entries
                if e.get("phase") != "intent" and e["intent"]["tool"] == "write_to_file"]
    assert len(receipts) == 30
    for receipt in receipts:
        (path, after), = receipt["files_after"].items()
        assert receipt["lines"], receipt  # the hunks were traced from the texts in memory
        kept = on_disk(state / "contents", after)
        assert kept is not None and hashlib.sha256(kept).hexdigest() == after
