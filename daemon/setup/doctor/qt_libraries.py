"""Doctor check of the system libraries Qt's xcb and wayland platform plugins need, found with ldd."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from intentd.daemon.setup.doctor.qt_packages import distribution_family, install_line
from intentd.daemon.setup.doctor.result import CheckResult, fail, ok, skip, warn

NAME = "qt libraries"
# Qt's own abort message names only the first library it misses (often xcb-cursor0), so a
# person installs one, fails again, and again; ldd lists every one, however deep.
PLUGINS = {"xcb": ("libqxcb.so",), "wayland": ("libqwayland.so", "libqwayland-generic.so",
                                                "libqwayland-egl.so")}
NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$")
BUNDLED = ("libQt6", "libpyside6", "libshiboken6", "libicu")  # shipped inside the PySide6 wheel


def platforms_folder() -> Path | None:
    """PySide6's platform plugin folder, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "Qt" / "plugins" / "platforms"
    return folder if folder.is_dir() else None


def missing_libraries(library: Path, ldd: str, timeout: float = 30.0) -> list[str]:
    """The sonames `library` needs, directly or through the libraries it loads, that the dynamic
    loader cannot find. Raises OSError when ldd cannot run."""
    try:
        out = subprocess.run([ldd, str(library)], capture_output=True, text=True,
                             timeout=timeout, check=False)
    except subprocess.SubprocessError as exc:
        raise OSError(f"ldd {library}: {exc}") from None
    missing: list[str] = []
    for line in out.stdout.splitlines():
        match = NOT_FOUND.match(line)
        if match and match.group(1) not in missing:
            missing.append(match.group(1))
    if out.returncode != 0 and not missing:
        raise OSError(f"ldd {library}: {out.stderr.strip() or f'exit {out.returncode}'}")
    return missing


def check_qt_libraries(folder: Path | None = None, env: Mapping[str, str] | None = None,
                       os_release: Path = Path("/etc/os-release")) -> CheckResult:
    """Every library the platform plugins need, with the command that installs the missing ones.

    Missing libraries fail the check only for the platform this session would use; for the
    other one (or with no display at all) they are a warning."""
    folder = folder or platforms_folder()
    ldd = shutil.which("ldd")
    if folder is None:
        return skip(NAME, "PySide6 is not installed (see the `qt` check)")
    if ldd is None:
        return skip(NAME, "no ldd here to list the libraries Qt's plugins load")
    found: dict[str, list[str]] = {}
    for platform, names in PLUGINS.items():
        plugin = next((folder / name for name in names if (folder / name).is_file()), None)
        if plugin is None:
            continue
        try:
            found[platform] = missing_libraries(plugin, ldd)
        except OSError as exc:
            return warn(NAME, str(exc), "run `ldd` on it yourself to see what it lacks")
    if not found:
        return skip(NAME, f"no xcb or wayland platform plugin in {folder}")
    return _result(found, _platform_in_use(env if env is not None else os.environ),
                   distribution_family(os_release))


def _result(found: dict[str, list[str]], in_use: str | None, family: str | None) -> CheckResult:
    broken = {platform: missing for platform, missing in found.items() if missing}
    if not broken:
        return ok(NAME, f"the {' and '.join(found)} platform plugins find every library they need")
    missing = [name for names in broken.values() for name in names]
    missing = list(dict.fromkeys(missing))
    detail = "; ".join(f"the {platform} platform plugin cannot load {', '.join(names)}"
                       for platform, names in broken.items())
    bundled = [name for name in missing if name.startswith(BUNDLED)]
    system = [name for name in missing if name not in bundled]
    fixes = []
    if system:
        fixes.append(install_line(system, family))
    if bundled:
        fixes.append("PySide6 is incomplete: `pip install --force-reinstall PySide6`")
    if in_use in broken:
        return fail(NAME, detail + f" (this session uses {in_use}: the app cannot start)",
                    "; ".join(fixes))
    return warn(NAME, detail, "; ".join(fixes))


def _platform_in_use(env: Mapping[str, str]) -> str | None:
    """The platform Qt would pick here: QT_QPA_PLATFORM, else wayland, else xcb."""
    chosen = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if chosen:
        return chosen
    if env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb" if env.get("DISPLAY") else None
