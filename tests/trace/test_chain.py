"""The ledger's hash chain: holds across rotation, crashes and other writers; names the first break."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.engine.ledger import Ledger, read_ledger, segments
from intentd.daemon.testing import DaemonProcess
from intentd.daemon.trace.chain import verify
from intentd.daemon.utils.statedir import workspace_state_dir
from tests.trace.scripted import Agent


def entry(n: int) -> dict[str, object]:
    return {"v": 1, "intent": {"id": f"c-{n}", "time": "2026-01-01T00:00:00+00:00",
                               "tool": "write_to_file"}, "decision": "allow", "pad": "x" * 300}


def write_ledger(folder: Path, count: int, rotate_bytes: int = 4000) -> Path:
    ledger = Ledger(folder / "ledger.jsonl", rotate_bytes=rotate_bytes)
    for n in range(count):
        ledger.append(entry(n))
    ledger.close()
    return folder / "ledger.jsonl"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_an_untouched_ledger_verifies_across_rotated_files(tmp_path: Path) -> None:
    path = write_ledger(tmp_path, 40)
    assert len(segments(path)) > 3, "the ledger should have rotated"
    report = verify(path)
    assert report.ok and report.chained == report.lines == 40 and report.head_seq == 40
    assert [e["intent"]["id"] for e in read_ledger(path, rotated=True)] == [
        f"c-{n}" for n in range(40)], "readers see the entries as before"


def test_a_changed_line_is_named_by_file_and_number(tmp_path: Path) -> None:
    path = write_ledger(tmp_path, 40)
    archive = segments(path)[1]
    lines = lines_of(archive)
    lines[2] = lines[2].replace(b'"allow"', b'"deny" ')
    archive.write_bytes(b"".join(lines))
    report = verify(path)
    assert not report.ok and report.kind == "changed" and str(report.at) == f"{archive.name}:3"


def test_a_removed_line_is_found_even_at_a_file_boundary(tmp_path: Path) -> None:
    path = write_ledger(tmp_path, 40)
    second = segments(path)[1]
    lines = lines_of(second)
    second.write_bytes(b"".join(lines[1:]))  # the first line of a rotated file
    report = verify(path)
    assert not report.ok and report.kind == "removed" and str(report.at) == f"{second.name}:1"
    assert "1 line(s) removed" in (report.problem or "")


def test_an_inserted_line_is_found(tmp_path: Path) -> None:
    path = write_ledger(tmp_path, 10, rotate_bytes=1 << 30)
    lines = lines_of(path)
    # A forged line with a link that holds (the number and hash the genuine 6th line carries)
    forged = lines[5].replace(b"c-5", b"c-F")
    path.write_bytes(b"".join([*lines[:5], forged, *lines[5:]]))
    report = verify(path)
    assert not report.ok and report.kind == "inserted" and str(report.at) == "ledger.jsonl:6"
    unchained = b'{"v": 1, "decision": "allow"}\n'
    path.write_bytes(b"".join([*lines[:3], unchained, *lines[3:]]))
    report = verify(path)
    assert not report.ok and report.kind == "inserted" and str(report.at) == "ledger.jsonl:4"


def test_a_line_torn_by_a_crash_is_not_tampering_and_the_chain_goes_on(tmp_path: Path) -> None:
    path = write_ledger(tmp_path, 10, rotate_bytes=1 << 30)
    with open(path, "ab") as out:
        out.write(b'{"v": 1, "intent": {"id": "c-torn", "ti')  # the daemon died mid-write
    report = verify(path)
    assert report.ok and report.chained == 10 and str(report.torn) == "ledger.jsonl:11"
    assert "torn" in report.notes[0]
    ledger = Ledger(path)  # the next daemon drops the torn line and links to the last whole one
    ledger.append(entry(10))
    ledger.close()
    report = verify(path)
    assert report.ok and report.torn is None and report.chained == 11


def test_ledgers_written_before_the_chain_begin_it_at_their_end(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    old = [json.dumps(entry(n)).encode() + b"\n" for n in range(5)]
    path.write_bytes(b"".join(old))
    write_ledger(tmp_path, 3, rotate_bytes=1 << 30)
    report = verify(path)
    assert report.ok and (report.unchained, report.chained) == (5, 3)
    assert "before the chain began" in report.notes[0]
    # The last unchained line is covered (the first link holds its hash); earlier ones are not.
    lines = lines_of(path)
    path.write_bytes(b"".join([*lines[:4], lines[4].replace(b"c-4", b"c-X"), *lines[5:]]))
    assert verify(path).kind == "changed"
    path.write_bytes(b"".join([lines[0].replace(b"c-0", b"c-X"), *lines[1:]]))
    assert verify(path).ok


def test_two_writers_on_one_ledger_keep_one_chain(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    first, second = Ledger(path, rotate_bytes=3000), Ledger(path, rotate_bytes=3000)
    for n in range(30):
        (first if n % 3 else second).append(entry(n))
    first.close()
    second.close()
    report = verify(path)
    assert report.ok and report.chained == 30 and len(segments(path)) > 2


def cli_verify(state: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "ledger", "verify",
                           "--workspace", str(workspace), "--state-dir", str(state)],
                          capture_output=True, text=True, timeout=60)


def test_the_command_exits_0_only_while_the_chain_holds(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = workspace_state_dir(workspace.resolve(), tmp_path / "state")
    folder.mkdir(parents=True)
    path = write_ledger(folder, 12, rotate_bytes=1 << 30)
    done = cli_verify(tmp_path / "state", workspace)
    assert done.returncode == 0 and "12 chained" in done.stdout
    lines = lines_of(path)
    path.write_bytes(b"".join([*lines[:3], *lines[4:]]))
    done = cli_verify(tmp_path / "state", workspace)
    assert done.returncode == 1 and "ledger.jsonl:4" in done.stdout and "removed" in done.stdout


def test_the_daemon_sees_lines_cut_from_the_end(daemon: DaemonProcess, client: Client,
                                                two_intents: Path) -> None:
    agent = Agent(client, two_intents, "INT-1", "claude-code")
    agent.call("read_file", path="src/app.py")
    agent.call("write_to_file", path="src/app.py", content="one\n")
    params = {"workspace": str(two_intents)}
    answer = client.call(protocol.LEDGER_VERIFY, params)
    assert answer["ok"] and answer["chained"] >= 2
    path = workspace_state_dir(two_intents.resolve(), daemon.state_dir / "intentd") / "ledger.jsonl"
    lines = lines_of(path)
    path.write_bytes(b"".join(lines[:-1]))  # no link after the last line can show this
    assert verify(path).ok
    answer = client.call(protocol.LEDGER_VERIFY, params)
    assert not answer["ok"] and answer["kind"] == "removed" and "cut from the end" in answer["problem"]


@pytest.mark.parametrize("garbage", [b"\xff\xfe not json\n", b"{}\n", b'"chain": {"seq": 1}\n'])
def test_foreign_lines_never_crash_the_walk(tmp_path: Path, garbage: bytes) -> None:
    path = write_ledger(tmp_path, 4, rotate_bytes=1 << 30)
    with open(path, "ab") as out:
        out.write(garbage)
    report = verify(path)
    assert not report.ok and report.kind == "inserted" and str(report.at) == "ledger.jsonl:5"


def test_a_last_line_missing_only_its_newline_is_torn(tmp_path: Path) -> None:
    path = write_ledger(tmp_path, 5, rotate_bytes=1 << 30)
    path.write_bytes(path.read_bytes()[:-1])
    report = verify(path)
    assert report.ok and report.chained == 4 and str(report.torn) == "ledger.jsonl:5"
