"""The doctor's `qt libraries` check: ldd on real copies of PySide6's xcb plugin whose needed
libraries cannot be found, and the install line for each distribution."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from intentd.daemon.setup.doctor.qt_libraries import check_qt_libraries, platforms_folder
from intentd.daemon.setup.doctor.qt_packages import distribution_family, install_line

REAL = platforms_folder()
pytestmark = pytest.mark.skipif(REAL is None or shutil.which("ldd") is None
                                or not (REAL / "libqxcb.so").is_file(),
                                reason="needs PySide6's xcb plugin and ldd")
X11 = {"DISPLAY": ":0"}


def os_release(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "os-release"
    path.write_text(text)
    return path


def plugin_copy(tmp_path: Path, renames: dict[bytes, bytes]) -> Path:
    """A copy of libqxcb.so beside PySide6's own Qt libraries, with some DT_NEEDED names
    changed (same length, so the ELF stays valid) to libraries no machine has."""
    assert REAL is not None
    (tmp_path / "Qt").mkdir()
    (tmp_path / "Qt" / "lib").symlink_to(REAL.parent.parent / "lib")  # its RUNPATH: $ORIGIN/../../lib
    folder = tmp_path / "Qt" / "plugins" / "platforms"
    folder.mkdir(parents=True)
    data = (REAL / "libqxcb.so").read_bytes()
    for old, new in renames.items():
        assert len(old) == len(new) and data.count(b"\0" + old + b"\0") == 1
        data = data.replace(b"\0" + old + b"\0", b"\0" + new + b"\0")
    (folder / "libqxcb.so").write_bytes(data)
    return folder


def test_every_missing_library_is_named_not_only_the_first(tmp_path: Path) -> None:
    folder = plugin_copy(tmp_path, {b"libxcb-shape.so.0": b"libxcb-shapq.so.0",
                                    b"libxkbcommon.so.0": b"libxkbcommoq.so.0"})
    result = check_qt_libraries(folder, env=X11, os_release=os_release(tmp_path, "ID=debian\n"))
    assert result.status == "fail", result
    assert "libxcb-shapq.so.0" in result.detail and "libxkbcommoq.so.0" in result.detail
    assert "the app cannot start" in result.detail
    assert "the package that provides" in result.fix
    assert "libxcb-shapq.so.0" in result.fix and "libxkbcommoq.so.0" in result.fix


def test_a_plugin_that_loads_everything_passes(tmp_path: Path) -> None:
    folder = tmp_path / "platforms"
    folder.mkdir()
    assert check_qt_libraries(folder, env=X11).status == "skip"  # no plugin at all
    ldd = subprocess.run(["ldd", str(REAL / "libqxcb.so")], capture_output=True, text=True).stdout
    libxcb = next(line.split()[2] for line in ldd.splitlines() if line.split()[0] == "libxcb.so.1")
    shutil.copy(libxcb, folder / "libqxcb.so")  # a library whose every need is on this machine
    result = check_qt_libraries(folder, env=X11)
    assert result.status == "ok" and "find every library they need" in result.detail


def test_missing_qt_libraries_of_the_wheel_say_reinstall_pyside6(tmp_path: Path) -> None:
    assert REAL is not None
    folder = tmp_path / "platforms"
    folder.mkdir()
    shutil.copy(REAL / "libqxcb.so", folder)  # alone: $ORIGIN/../../lib holds no libQt6XcbQpa
    result = check_qt_libraries(folder, env=X11)
    assert result.status == "fail" and "libQt6XcbQpa.so.6" in result.detail
    assert "pip install --force-reinstall PySide6" in result.fix


def test_no_display_is_a_warning_the_daemon_runs_without_one(tmp_path: Path) -> None:
    folder = plugin_copy(tmp_path, {b"libxcb-shape.so.0": b"libxcb-shapq.so.0"})
    assert check_qt_libraries(folder, env={}).status == "warn"
    assert check_qt_libraries(folder, env={"QT_QPA_PLATFORM": "offscreen"}).status == "warn"
    assert check_qt_libraries(folder, env={"WAYLAND_DISPLAY": "wayland-0"}).status == "warn"


def test_the_install_line_is_this_distributions(tmp_path: Path) -> None:
    missing = ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0"]
    ubuntu = distribution_family(os_release(tmp_path, 'ID=ubuntu\nID_LIKE="debian"\n'))
    fedora = distribution_family(os_release(tmp_path, "ID=fedora\n"))
    assert install_line(missing, ubuntu) == (
        "`sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1`")
    assert install_line(missing, fedora) == (
        "`sudo dnf install xcb-util-cursor xcb-util-keysyms xcb-util-wm`")
    both = install_line(missing, distribution_family(tmp_path / "none"))
    assert "(Debian/Ubuntu)" in both and "(Fedora)" in both


def test_this_machines_plugins_are_checked_by_the_doctor() -> None:
    """Whatever this machine lacks, the check runs ldd on the installed plugins and says so."""
    result = check_qt_libraries(env={})
    assert result.status in ("ok", "warn"), result
    assert "platform plugin" in result.detail
