"""Case-insensitive file systems: `.ORCHESTRATION/`, `.GIT/` and `.ENV` are the real files there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.engine import workspace as workspace_module
from intentd.daemon.engine.engine import Engine
from intentd.daemon.testing import decide, make_intent, make_session, make_workspace
from intentd.daemon.utils.paths import folds_case

SCOPE = ["**", "!src/secret.py"]
FILES = {".orchestration/ignore": ".env\nkeys/\n", ".env": "TOKEN=1\n", "src/secret.py": "x\n"}


def _verdicts(engine: Engine, root: Path) -> dict[str, tuple[str, str]]:
    """What the agent's attempts come to, by attempt."""
    session = make_session(engine, root)
    decide(engine, session, "select_active_intent", intent_id="INT-1")
    attempts: dict[str, tuple[str, dict[str, Any]]] = {
        "intents": ("write_to_file", {"path": ".ORCHESTRATION/active_intents.yaml", "content": "x"}),
        "git": ("write_to_file", {"path": ".GIT/config", "content": "x"}),
        "nested git": ("write_to_file", {"path": "lib/.Git/hooks/pre-commit", "content": "x"}),
        "env": ("read_file", {"path": ".ENV"}),
        "keys": ("read_file", {"path": "KEYS/id_rsa"}),
        "excluded": ("write_to_file", {"path": "src/SECRET.py", "content": "x"}),
        "owned": ("write_to_file", {"path": "SRC/new.py", "content": "x"}),
    }
    out = {}
    for label, (tool, args) in attempts.items():
        decision = decide(engine, session, tool, **args).decision
        out[label] = (decision.verdict.value, decision.stage)
    return out


@pytest.fixture
def caseless_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace whose file system is taken to fold case: the comparisons alone, on any
    machine (the real file systems, which need root, are tested below)."""
    monkeypatch.setattr(workspace_module, "folds_case", lambda folder: True, raising=False)
    return make_workspace(tmp_path / "ws", make_intent(owned_scope=SCOPE), files=FILES)


def test_caseless_workspace_refuses_every_spelling_of_a_protected_or_ignored_path(
        engine: Engine, caseless_root: Path) -> None:
    verdicts = _verdicts(engine, caseless_root)
    assert verdicts["intents"] == ("deny", "protected")
    assert verdicts["git"] == ("deny", "protected")
    assert verdicts["nested git"] == ("deny", "protected")
    assert verdicts["env"] == ("deny", "access")
    assert verdicts["keys"] == ("deny", "access")
    assert verdicts["excluded"] == ("deny", "scope")
    assert verdicts["owned"][0] != "deny"  # SRC/new.py is src/new.py there: in scope


def test_case_sensitive_workspace_keeps_names_that_differ_in_case_apart(
        engine: Engine, tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", make_intent(owned_scope=["src/**", "!src/secret.py"]),
                          files=FILES)
    assert not folds_case(str(root))  # probed on the real folder
    verdicts = _verdicts(engine, root)
    assert verdicts["intents"] == ("deny", "protected")  # caseless everywhere: fails closed
    assert verdicts["git"] == ("deny", "protected")
    assert verdicts["env"][0] != "deny"  # .ENV is another file here, and not ignored
    assert verdicts["owned"] == ("deny", "scope")  # SRC/ is not src/ here


def test_probe_leaves_no_file_behind_in_an_empty_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert folds_case(str(empty)) is False
    assert list(empty.iterdir()) == []


REAL_FOLDER_SCRIPT = textwrap.dedent("""
    import json, subprocess, sys
    from pathlib import Path
    from intentd.daemon.engine.engine import Engine
    from intentd.daemon.utils.paths import folds_case
    from intentd.daemon.testing import make_intent, make_workspace
    from tests.engine.test_case_folding import FILES, SCOPE, _verdicts
    mount, state, how = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    root = mount / "ws"
    root.mkdir()
    if how == "casefold":
        subprocess.run(["chattr", "+F", str(root)], check=True)  # the folder folds case from now on
    make_workspace(root, make_intent(owned_scope=SCOPE), files=FILES)
    engine = Engine(state, checkpoints=False)
    print(json.dumps({"folds": folds_case(str(root)), "verdicts": _verdicts(engine, root)}))
""")
# Each mounts a real case-insensitive file system in a private mount namespace, then runs the
# script in it: an ext4-style `casefold` tmpfs (kernels with CONFIG_UNICODE), or exFAT, the
# file system of USB drives and SD cards shared with Windows and macOS, through FUSE.
MOUNTS = {
    "casefold": ("mount -t tmpfs -o casefold tmpfs {mount}", "true"),
    "exfat": ("truncate -s 16M {image} && mkfs.exfat {image} >/dev/null && "
              "loop=$(losetup -f --show {image}) && mount.exfat-fuse $loop {mount}",
              "umount {mount}; losetup -d $loop"),
}


def _case_folding_mount(how: str, tmp_path: Path) -> tuple[str, Path]:
    """The shell commands that mount `how`, run the script and clean up; skips if this
    machine cannot mount it."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("mounting a file system needs root and unshare")
    if how == "exfat" and not (shutil.which("mount.exfat-fuse") and shutil.which("mkfs.exfat")
                               and os.path.exists("/dev/fuse")):
        pytest.skip("exFAT needs exfat-fuse, exfatprogs and /dev/fuse")
    mount = tmp_path / "mnt"
    mount.mkdir()
    up, down = (part.format(mount=mount, image=tmp_path / "fs.img") for part in MOUNTS[how])
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"{up} && {down}"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"this machine cannot mount {how}: {probe.stderr.decode()[-200:]}")
    script = tmp_path / "probe.py"
    script.write_text(REAL_FOLDER_SCRIPT)
    run = f'{up} && "{sys.executable}" {script} {mount} {tmp_path / "state"} {how}; rc=$?; {down}; exit $rc'
    return run, mount


@pytest.mark.parametrize("how", ["casefold", "exfat"])
def test_real_case_folding_folder(how: str, tmp_path: Path) -> None:
    """A real case-insensitive file system: the probe finds it and every spelling is caught."""
    command, _mount = _case_folding_mount(how, tmp_path)
    repo = Path(__file__).parents[2]
    run = subprocess.run(["unshare", "-m", "sh", "-c", command], capture_output=True, text=True,
                         cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, timeout=90)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["folds"] is True
    verdicts = {k: tuple(v) for k, v in result["verdicts"].items()}
    assert verdicts["intents"] == ("deny", "protected") and verdicts["git"] == ("deny", "protected")
    assert verdicts["env"] == ("deny", "access") and verdicts["keys"] == ("deny", "access")
    assert verdicts["excluded"] == ("deny", "scope") and verdicts["owned"][0] != "deny"
