"""Without Landlock commands run unconfined, and that is said: in the receipt, the result, doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.sandbox.landlock import FORCE_ABI_ENV
from intentd.daemon.setup.doctor.system import check_sandbox
from tests.sandbox.conftest import Connect, approved_command, daemon_with, ledger_entries

NO_LANDLOCK = {FORCE_ABI_ENV: "0"}  # the test seam: the ABI probe answers 0


@pytest.fixture
def connect(short_dir: Path) -> Iterator[Connect]:
    with daemon_with(short_dir, NO_LANDLOCK) as make:
        yield make


def test_an_unconfined_command_says_so_and_the_audit_still_undoes(connect: Connect,
                                                                   workspace: Path) -> None:
    (workspace / "src" / "w.sh").write_text("echo x > src/in.txt; echo y > docs/out.txt\n")
    answer = approved_command(connect, workspace, "bash src/w.sh")
    result = answer["result"]
    assert result["ok"], "nothing stopped the write: no kernel confinement"
    assert "commands run UNCONFINED" in result["output"]
    assert f"disabled by {FORCE_ABI_ENV}" in result["output"]
    sandbox = result["data"]["sandbox"]
    assert sandbox["confined"] is False and "UNCONFINED" in sandbox["note"]
    assert (workspace / "src" / "in.txt").exists()
    assert not (workspace / "docs" / "out.txt").exists(), "the scope audit undid it"
    entry = ledger_entries(connect("cli"), workspace)[-1]
    assert entry["receipt"]["data"]["sandbox"]["confined"] is False


def test_doctor_warns_when_landlock_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FORCE_ABI_ENV, "0")
    result = check_sandbox()
    assert result.status == "warn" and "UNCONFINED" in result.detail and result.fix


def test_doctor_says_commands_are_confined_when_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FORCE_ABI_ENV, raising=False)
    result = check_sandbox()
    assert result.status == "ok" and "confined by Landlock ABI" in result.detail


def test_doctor_command_line_shows_it(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "doctor", "--json",
                          "--socket", str(tmp_path / "none.sock")],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, **NO_LANDLOCK, "QT_QPA_PLATFORM": "offscreen"})
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["sandbox"]["status"] == "warn" and "UNCONFINED" in checks["sandbox"]["detail"]

