"""Every Landlock ABI from 1 up confines writes; TCP rules from 4 (older kernels, simulated)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from intentd.daemon.sandbox.confine import SandboxRequest, confine
from intentd.daemon.sandbox.landlock import FORCE_ABI_ENV, kernel_abi
from intentd.daemon.setup.doctor.system import check_sandbox

REAL_ABI = kernel_abi()
pytestmark = pytest.mark.skipif(REAL_ABI < 1, reason="needs a kernel with Landlock")


@pytest.mark.parametrize("abi", range(1, REAL_ABI + 1))
def test_each_abi_confines_writes(abi: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("src", "docs"):
        (tmp_path / folder).mkdir()
    monkeypatch.setenv(FORCE_ABI_ENV, str(abi))
    confinement = confine(SandboxRequest(str(tmp_path), ("src/**",)))
    try:
        proc = confinement.spawn(lambda: subprocess.Popen(
            ["bash", "-c", "echo a > src/a; echo b > docs/b; mkdir src/sub && mv src/a src/sub/"],
            cwd=tmp_path, stderr=subprocess.PIPE, text=True))
        _, err = proc.communicate(timeout=30)
        report = confinement.report()
    finally:
        confinement.close()
    assert (tmp_path / "src" / "sub" / "a").exists(), err
    assert not (tmp_path / "docs" / "b").exists() and "Permission denied" in err
    assert report["confined"] and report["landlock_abi"] == abi
    assert report["network_enforced"] is (abi >= 4)


def test_below_abi_4_doctor_says_tcp_is_not_confined(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes are confined, TCP is not: said, not silent."""
    monkeypatch.setenv(FORCE_ABI_ENV, "3")
    result = check_sandbox()
    assert result.status == "warn" and "network not confined" in result.detail
    assert "Landlock ABI 4" in str(result.fix)
