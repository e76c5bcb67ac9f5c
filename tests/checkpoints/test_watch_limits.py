"""Never blind: folders the watcher cannot watch (too few inotify watches) are scanned, and said so.

The per-user watch limit is lowered inside a user namespace (`unshare -U -r`), where
/proc/sys/user/max_inotify_watches belongs to the namespace: the system-wide value is untouched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import write

FOLDERS = 60
LIMIT = 25

# Runs inside the namespace: lower the limit, open a store, change files, print what was recorded.
SCENARIO = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    with open("/proc/sys/user/max_inotify_watches", "w") as handle:
        handle.write(sys.argv[3])
    from intentd.daemon.checkpoints import CheckpointStore
    ws, state = Path(sys.argv[1]), Path(sys.argv[2])
    out = {}
    with CheckpointStore(ws, state) as store:
        out["coverage"] = store.coverage().to_json()
        out["watching"] = store.watching
        store.create(None, label="baseline")
        changed = [f"d{i:02d}/f.txt" for i in range(0, 60, 6)]
        for rel in changed:
            (ws / rel).write_text("changed\\n")
        os.makedirs(ws / "fresh/deeper")
        (ws / "fresh/deeper/new.txt").write_text("new\\n")
        out["changed"] = changed
        out["first"] = list(store.create(None, label="before a command").files)
        (ws / "fresh/deeper/new.txt").write_text("edited\\n")
        out["second"] = list(store.create(None, label="again").files)
        out["idle"] = list(store.create(None, label="idle").files)
        out["after"] = store.coverage().to_json()
    print(json.dumps(out))
""")


_LIMITED = """import json, os, subprocess, sys, time
from pathlib import Path
with open("/proc/sys/user/max_inotify_watches", "w") as handle:
    handle.write("LIMIT")
from intentd.daemon.checkpoints import CheckpointStore
ws, state = Path(sys.argv[1]), Path(sys.argv[2])
out = {}
with CheckpointStore(ws, state) as store:
"""


def with_store(body: str, limit: int = 3) -> str:
    """A script for in_namespace: the watch limit lowered to `limit`, the store of the workspace
    argv[1] (its state in argv[2]) opened as `store`, `body` run with it, `out` printed."""
    return (_LIMITED.replace("LIMIT", str(limit)) + textwrap.indent(textwrap.dedent(body), "    ")
            + "print(json.dumps(out))\n")


def in_namespace(*args: str, script: str = SCENARIO) -> dict[str, object]:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1)")
    probe = subprocess.run([unshare, "-U", "-r", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"user namespaces are not available: {probe.stderr.decode().strip()}")
    done = subprocess.run([unshare, "-U", "-r", sys.executable, "-c", script, *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_folders_beyond_the_watch_limit_are_scanned_and_reported(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for i in range(FOLDERS):
        write(ws, f"d{i:02d}/f.txt", "original\n")
    out = in_namespace(str(ws), str(tmp_path / "state"), str(LIMIT))
    coverage = out["coverage"]
    assert isinstance(coverage, dict)
    assert coverage["mode"] == "partial" and not out["watching"]
    assert coverage["watched_folders"] == LIMIT
    assert coverage["unwatched_count"] == FOLDERS + 1 - LIMIT
    assert "watch limit" in str(coverage["reason"]) and "scanned" in str(coverage["summary"])
    # every change is recorded, watched folder or not, and new folders past the limit too
    assert set(out["first"]) == {*out["changed"], "fresh/deeper/new.txt"}  # type: ignore[misc]
    assert out["second"] == ["fresh/deeper/new.txt"]
    assert out["idle"] == []
    after = out["after"]
    assert isinstance(after, dict) and after["unwatched_count"] == coverage["unwatched_count"] + 1
    assert f"({LIMIT} per user" in str(after["reason"])


DOCTOR = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    with open("/proc/sys/user/max_inotify_watches", "w") as handle:
        handle.write(sys.argv[2])
    from intentd.daemon.setup.doctor.workspace import check_watch_coverage
    print(json.dumps(check_watch_coverage(Path(sys.argv[1])).to_json()))
""")


def test_the_doctor_warns_when_folders_outnumber_the_watches_left(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for i in range(FOLDERS):
        write(ws, f"d{i:02d}/f.txt", "x\n")
    write(ws, ".git/objects/ab/cd", "never watched\n")
    low = in_namespace(str(ws), str(LIMIT), script=DOCTOR)
    assert low["status"] == "warn" and f"{FOLDERS + 1:,} folders to watch" in str(low["detail"])
    assert "max_user_watches" in str(low["fix"])
    enough = in_namespace(str(ws), "100000", script=DOCTOR)
    assert enough["status"] == "ok", enough
