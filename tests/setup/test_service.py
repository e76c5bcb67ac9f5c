"""install-user-service / uninstall-user-service, in a temp XDG_CONFIG_HOME with a fake systemd."""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

import pytest

from intentd.daemon.cli import main
from intentd.daemon.setup.service import install, uninstall
from intentd.daemon.setup.units import SERVICE_UNIT, SOCKET_UNIT, daemon_command, user_unit_dir
from tests.setup.fakes import FakeSystemctl


def _args(dry_run: bool = False, no_systemctl: bool = False) -> argparse.Namespace:
    return argparse.Namespace(dry_run=dry_run, no_systemctl=no_systemctl)


@pytest.fixture
def unit_dir(tmp_path: Path) -> Path:
    """The conftest points XDG_CONFIG_HOME into tmp_path: never the real user's config."""
    folder = user_unit_dir()
    assert folder == tmp_path / "xdg-config" / "systemd" / "user"
    return folder


def test_install_writes_both_units_and_enables_the_socket(unit_dir: Path) -> None:
    fake = FakeSystemctl()
    assert install(_args(), fake) == 0
    service = (unit_dir / SERVICE_UNIT).read_text()
    assert f"ExecStart={daemon_command()[0]} serve" in service
    assert "ListenStream=%t/intentd/intentd.sock" in (unit_dir / SOCKET_UNIT).read_text()
    assert fake.verbs == ["daemon-reload", f"enable --now {SOCKET_UNIT}"]
    assert not [p for p in unit_dir.iterdir() if p.name.startswith(".")], "no temp file left"


@pytest.mark.parametrize(("fake", "why"), [
    (FakeSystemctl(installed=False), "systemctl is not installed"),
    (FakeSystemctl(booted=False), "not started by systemd"),
    (FakeSystemctl(answers=False), "Failed to connect to bus"),
])
def test_without_a_usable_systemd_nothing_is_written(
        unit_dir: Path, capsys: pytest.CaptureFixture[str], fake: FakeSystemctl, why: str) -> None:
    assert install(_args(), fake) == 1
    assert not unit_dir.exists()
    assert fake.verbs == []
    err = capsys.readouterr().err
    assert why in err and "nothing was written" in err
    assert "intentd serve" in err and "--no-systemctl" in err, "says what to do instead"


def test_a_failing_enable_is_reported(unit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert install(_args(), FakeSystemctl(failing=["enable"])) == 1
    assert "enable --now intentd.socket` failed: enable went wrong" in capsys.readouterr().err


def test_reinstalling_says_a_running_daemon_needs_a_restart(
        unit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(_args(), FakeSystemctl())
    capsys.readouterr()
    assert install(_args(), FakeSystemctl()) == 0
    assert f"systemctl --user restart {SERVICE_UNIT}" in capsys.readouterr().out


def test_no_systemctl_writes_the_units_and_prints_the_commands(
        unit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install-user-service", "--no-systemctl"]) == 0
    assert (unit_dir / SOCKET_UNIT).is_file() and (unit_dir / SERVICE_UNIT).is_file()
    assert "systemctl --user enable --now intentd.socket" in capsys.readouterr().out


def test_dry_run_prints_the_units_and_changes_nothing(
        unit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install-user-service", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"# {unit_dir / SOCKET_UNIT}" in out and "ExecStart=" in out
    assert "systemctl --user daemon-reload" in out
    assert not unit_dir.exists()


def test_uninstall_disables_and_removes(unit_dir: Path) -> None:
    install(_args(), FakeSystemctl())
    fake = FakeSystemctl()
    assert uninstall(_args(), fake) == 0
    assert list(unit_dir.iterdir()) == []
    assert fake.verbs == [f"disable --now {SOCKET_UNIT} {SERVICE_UNIT}", "daemon-reload"]


def test_uninstall_without_systemd_removes_files_and_the_enable_link(
        unit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(_args(), FakeSystemctl())
    wants = unit_dir / "sockets.target.wants"
    wants.mkdir()
    (wants / SOCKET_UNIT).symlink_to(unit_dir / SOCKET_UNIT)
    fake = FakeSystemctl(booted=False)
    assert uninstall(_args(), fake) == 0
    assert not (unit_dir / SOCKET_UNIT).exists() and not (wants / SOCKET_UNIT).is_symlink()
    assert fake.verbs == [] and "systemctl was not run" in capsys.readouterr().out


def test_uninstall_dry_run_and_nothing_installed(unit_dir: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["uninstall-user-service", "--no-systemctl"]) == 0
    assert "nothing to remove" in capsys.readouterr().out
    main(["install-user-service", "--no-systemctl"])
    assert main(["uninstall-user-service", "--dry-run"]) == 0
    assert f"rm {unit_dir / SERVICE_UNIT}" in capsys.readouterr().out
    assert (unit_dir / SERVICE_UNIT).exists()


def test_units_are_written_durably_and_readable_by_systemd(unit_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    unit_dir.mkdir(parents=True)
    (unit_dir / SERVICE_UNIT).write_text("[Service]\n")
    (unit_dir / SERVICE_UNIT).chmod(0o600)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    assert install(_args(no_systemctl=True), FakeSystemctl()) == 0
    assert len(synced) >= 2  # each unit's bytes reach the disk before the rename
    for name in (SERVICE_UNIT, SOCKET_UNIT):
        assert stat.S_IMODE((unit_dir / name).stat().st_mode) == 0o644
