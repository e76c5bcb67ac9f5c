"""Rotation keeps every line; queries through the index find them by time, session, intent, tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine.ledger import Ledger, read_ledger, segments
from intentd.daemon.engine.ledger_index import BadQuery, LedgerIndex, LedgerQuery


def entry(n: int, *, session: str = "s-1", tool: str = "read_file", intent: str | None = "A",
          decision: str = "allow", minute: int | None = None) -> dict[str, Any]:
    time = f"2026-01-01T10:{(minute if minute is not None else n // 60) % 60:02d}:{n % 60:02d}.000+00:00"
    return {"v": 1, "n": n, "intent": {"time": time, "session": session, "tool": tool,
                                       "intent_id": intent}, "decision": decision,
            "pad": "x" * (n % 50)}


def fill(ledger: Ledger, count: int, **kwargs: Any) -> None:
    for n in range(count):
        ledger.append(entry(n, session=f"s-{n % 7}", tool=("read_file", "write_to_file")[n % 2],
                            intent=f"INT-{n % 3}", decision=("allow", "deny", "ask")[n % 3],
                            **kwargs))


def all_pages(index: LedgerIndex, **filters: Any) -> list[int]:
    found: list[int] = []
    before = None
    while True:
        page = index.query(LedgerQuery(limit=37, before=before, **filters))
        found = [e["n"] for e in page.entries] + found
        if page.older is None:
            return found
        before = page.older


def test_rotation_keeps_every_line_in_order(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path, rotate_bytes=4096)
    fill(ledger, 600)
    ledger.close()
    files = segments(path)
    assert len(files) > 10, "the ledger rotated by size"
    assert all(p.stat().st_size < 4096 + 400 for p in files)
    assert [e["n"] for e in read_ledger(path, rotated=True)] == list(range(600))
    assert all(p.read_bytes().endswith(b"\n") for p in files if p.stat().st_size)


def test_paging_returns_every_entry_once_across_rotated_files(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path, rotate_bytes=8192)
    fill(ledger, 500)
    index = LedgerIndex(path)
    assert all_pages(index) == list(range(500))
    fill_more = [entry(n) for n in range(500, 520)]
    for item in fill_more:
        ledger.append(item)  # written after the index was built: the next query catches up
    assert index.query(LedgerQuery(limit=5)).entries[-1]["n"] == 519
    assert all_pages(index) == list(range(520))
    ledger.close()


def test_filters_by_session_intent_tool_decision_and_time(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path, rotate_bytes=16384)
    fill(ledger, 700)
    index = LedgerIndex(path)
    expected = [n for n in range(700) if n % 7 == 3]
    assert all_pages(index, session_id="s-3") == expected
    assert all_pages(index, intent_id="INT-2", tool="write_to_file") == [
        n for n in range(700) if n % 3 == 2 and n % 2 == 1]
    assert all_pages(index, decision="deny") == [n for n in range(700) if n % 3 == 1]
    since = "2026-01-01T10:02:00Z"
    until = "2026-01-01T10:03:30+00:00"
    assert all_pages(index, since=_epoch(since), until=_epoch(until)) == list(range(120, 210))
    ledger.close()


def test_a_deleted_or_damaged_index_is_rebuilt_from_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path, rotate_bytes=8192)
    fill(ledger, 200)
    index = LedgerIndex(path)
    assert len(all_pages(index)) == 200
    index.db_path.write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{index.db_path}{suffix}").unlink(missing_ok=True)
    assert all_pages(index) == list(range(200))
    # A ledger replaced by a shorter one (restored from a backup): the index starts over.
    ledger.close()
    for part in segments(path):
        part.unlink()
    ledger = Ledger(path)
    for n in range(3):
        ledger.append(entry(1000 + n))
    assert all_pages(index) == [1000, 1001, 1002]
    ledger.close()


def test_the_index_is_private(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    ledger.append(entry(1))
    index = LedgerIndex(path)
    index.query(LedgerQuery())
    assert index.db_path.stat().st_mode & 0o077 == 0
    ledger.close()


WRITER = """
import sys
from pathlib import Path
from intentd.daemon.engine.ledger import Ledger
ledger = Ledger(Path(sys.argv[1]), rotate_bytes=20000)
for n in range(int(sys.argv[2]), int(sys.argv[2]) + 1500):
    ledger.append({"v": 1, "n": n, "intent": {"time": "2026-01-01T00:00:00Z"}, "pad": "y" * 40})
"""


def test_two_processes_writing_and_rotating_lose_no_line(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(start)])
             for start in (0, 10_000)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    numbers = sorted(e["n"] for e in read_ledger(path, rotated=True))
    assert numbers == list(range(1500)) + list(range(10_000, 11_500))
    assert len(segments(path)) > 5


@pytest.mark.parametrize("params, bad", [({"limit": 0}, "limit"), ({"limit": True}, "limit"),
                                         ({"since": "yesterday"}, "since"),
                                         ({"before": "x/y"}, "before"), ({"tool": 5}, "tool")])
def test_bad_query_params_name_the_param(params: dict[str, Any], bad: str) -> None:
    with pytest.raises(BadQuery) as caught:
        LedgerQuery.from_params(params)
    assert caught.value.param == bad


def _epoch(text: str) -> float:
    query = LedgerQuery.from_params({"since": text})
    assert query.since is not None
    return query.since


def test_partial_tail_from_an_older_writer_is_dropped_on_open(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text(json.dumps(entry(1)) + "\n" + '{"v": 1, "n": 2, "inte')
    os.chmod(path, 0o600)
    ledger = Ledger(path)
    ledger.append(entry(3))
    ledger.close()
    assert [e["n"] for e in read_ledger(path)] == [1, 3]
