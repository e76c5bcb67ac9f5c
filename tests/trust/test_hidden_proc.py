"""/proc mounted with hidepid hides other users' processes, pid 1 among them: the person's
ancestry still reads whole (nothing is above pid 1), while any other hidden link fails closed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from intentd.daemon.trust import procs
from intentd.daemon.trust.procs import ancestry

SYSTEM_PYTHON = Path("/usr/bin/python3")  # one that another user may run (not root's own)


def fake_proc(root: Path, *table: tuple[int, int, int, str]) -> Path:
    """A /proc holding only (pid, ppid, start, comm) of `table`."""
    for pid, ppid, start, comm in table:
        folder = root / str(pid)
        folder.mkdir(parents=True)
        rest = ["S", str(ppid), *["0"] * 17, str(start), "0", "0"]
        (folder / "stat").write_text(f"{pid} ({comm}) {' '.join(rest)}\n")
        (folder / "cmdline").write_bytes(comm.encode() + b"\0")
    return root


def test_a_hidden_pid_1_ends_the_chain(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path / "proc", (300, 200, 30, "intentd"), (200, 1, 20, "bash"))
    found = ancestry(300, proc)
    assert found is not None and [p.pid for p in found] == [300, 200]


def test_any_other_hidden_link_fails_closed(tmp_path: Path) -> None:
    """An unreadable parent that is not pid 1 may be anything, the daemon or an agent."""
    proc = fake_proc(tmp_path / "proc", (300, 200, 30, "intentd"), (200, 150, 20, "bash"),
                     (1, 0, 1, "systemd"))
    assert ancestry(300, proc) is None
    assert ancestry(999, proc) is None  # the caller itself is gone


# Run as nobody, in a new pid and mount namespace whose /proc hides root's pid 1. Prints the
# ancestry of itself and of a child it starts, as [[pid, ppid], ...] or null.
SCENARIO = textwrap.dedent("""
    import importlib.util, json, os, subprocess, sys
    spec = importlib.util.spec_from_file_location("procs", sys.argv[1])
    procs = importlib.util.module_from_spec(spec)
    sys.modules["procs"] = procs
    spec.loader.exec_module(procs)
    def chain(pid):
        found = procs.ancestry(pid)
        return None if found is None else [[p.pid, p.ppid] for p in found]
    if len(sys.argv) > 2:
        print(json.dumps(chain(os.getpid())))
        sys.exit(0)
    child = subprocess.run([sys.executable, __file__, sys.argv[1], "child"],
                           capture_output=True, text=True)
    print(json.dumps({"pid": os.getpid(), "hidden": not os.path.exists("/proc/1/stat"),
                      "self": chain(os.getpid()), "child": json.loads(child.stdout)}))
""")


@pytest.mark.skipif(os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("setpriv"))
                    or not SYSTEM_PYTHON.exists(),
                    reason="needs root, unshare, setpriv and a system python3 to act as nobody")
def test_real_hidepid_proc(short_dir: Path) -> None:
    os.chmod(short_dir, 0o755)  # nobody reads the script
    script, module = short_dir / "scenario.py", short_dir / "procs.py"
    script.write_text(SCENARIO)
    shutil.copyfile(procs.__file__, module)  # the checkout may sit where nobody cannot read
    for path in (script, module):
        path.chmod(0o644)
    as_nobody = (f"setpriv --reuid 65534 --regid 65534 --clear-groups {SYSTEM_PYTHON} "
                 f"{script} {module}")
    # The shell stays pid 1 (`; true` keeps it from exec'ing); the second run sits below a
    # root shell that is not pid 1, which hidepid hides as well.
    command = (f"mount -t proc -o hidepid=2 proc /proc || exit 3; {as_nobody}; "
               f"sh -c '{as_nobody}; true'; true")
    done = subprocess.run(["unshare", "-m", "-p", "-f", "sh", "-c", command],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:  # no new namespaces, or no proc mount allowed in them
        pytest.skip(f"cannot mount a hidepid /proc here: {done.stderr.strip()[-300:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 2, done.stderr
    below_init, below_root_shell = lines
    assert below_init["hidden"], "pid 1 is hidden from nobody"
    assert below_init["self"] == [[below_init["pid"], 1]], "whole: nothing is above pid 1"
    assert below_init["child"] == [[below_init["child"][0][0], below_init["pid"]],
                                   [below_init["pid"], 1]], "the parent is still seen"
    assert below_root_shell["self"] is None and below_root_shell["child"] is None, \
        "a hidden link below pid 1 fails closed"
