"""A ledger that cannot be written: whole lines or nothing, and no call runs unrecorded meanwhile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Runs in its own process: the file-size limit and the mount must not touch the test runner.
SCENARIO = textwrap.dedent("""
    import errno, json, os, resource, sys
    from pathlib import Path
    from intentd.daemon.engine.engine import Engine
    from intentd.daemon.testing import make_intent, make_session, make_workspace

    state, work, how = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    root = make_workspace(work / "ws", make_intent(owned_scope=["**"]), files={"a.txt": "a\\n"})
    engine = Engine(state, checkpoints=False)
    session = make_session(engine, root)
    ledger = engine.ledger(session.workspace)
    report = {"runs": 0, "failures": [], "stages": []}

    def call(path="a.txt"):
        ev = engine.evaluate(session, "read_file", {"path": path})
        report["stages"].append(ev.decision.stage)
        try:
            outcome = engine.run(ev, "auto") if ev.decision.allowed else engine.refuse(ev)
        except OSError as exc:
            report["failures"].append(exc.__class__.__name__)
            return None
        report["runs"] += 1
        return outcome

    for _ in range(3):
        call()
    # Make the disk full (or the file-size limit reached) part way through the next line.
    if how == "full":
        with open(state / "filler", "wb", buffering=0) as filler:
            try:
                while True:
                    filler.write(b"x" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    else:
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (ledger.path.stat().st_size + 300, hard))
    for _ in range(5):
        call("b" * 900 + ".txt")
    report["refused_while_full"] = report["stages"][-1]
    # Space comes back: calls run and are recorded again.
    if how == "full":
        os.unlink(state / "filler")
    else:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    report["after"] = call().decision.stage
    engine.close()
    report["ledger"] = ledger.path.read_text(errors="replace")
    print(json.dumps(report))
""")


def _run(command: list[str], cwd: Path) -> dict[str, object]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return report


def _check(report: dict[str, object]) -> None:
    text = str(report["ledger"])
    assert text.endswith("\n"), "the ledger ends with a whole line"
    lines = text.splitlines()
    assert all(json.loads(line)["v"] == 1 for line in lines), "every line is a whole entry"
    assert report["failures"], "the write that did not fit was reported, not dropped silently"
    assert report["refused_while_full"] == "ledger", "no call runs while it cannot be recorded"
    assert report["after"] == "approval"  # space came back: calls run again
    recorded = [json.loads(line)["intent"]["args"]["path"] for line in lines]
    assert recorded[:3] == ["a.txt"] * 3 and recorded[-1] == "a.txt"


def test_file_size_limit_mid_line_leaves_whole_lines(tmp_path: Path) -> None:
    """RLIMIT_FSIZE stops a write part way, as a full disk does; no privileges needed."""
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    (tmp_path / "state").mkdir()
    _check(_run([sys.executable, str(script), str(tmp_path / "state"), str(tmp_path), "limit"],
                Path(__file__).parents[2]))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="mounting a small tmpfs needs root and unshare")
def test_full_disk_mid_line_leaves_whole_lines(tmp_path: Path) -> None:
    """A real 64 KiB file system that fills up, in a private mount namespace."""
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    state = tmp_path / "state"
    state.mkdir()
    command = (f"mount -t tmpfs -o size=64k,mode=0700 tmpfs {state} && "
               f'"{sys.executable}" {script} {state} {tmp_path} full')
    _check(_run(["unshare", "-m", "sh", "-c", command], Path(__file__).parents[2]))
