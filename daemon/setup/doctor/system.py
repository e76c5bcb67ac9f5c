"""Doctor checks of this machine: git, the Qt platform, the state folder, the user service, Landlock."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from intentd.daemon.sandbox.status import NETWORK_ABI, sandbox_status
from intentd.daemon.setup.doctor.result import (
    CheckResult,
    fail,
    ok,
    private_problem,
    skip,
    warn,
)
from intentd.daemon.setup.units import SERVICE_UNIT, user_unit_dir
from intentd.daemon.utils.statedir import state_home

# Starting a QGuiApplication is the only sure test that a platform plugin loads (missing
# xcb-cursor or EGL libraries show up only then), and a child process keeps a crash or an
# abort() of Qt's away from the doctor.
QT_PROBE = ("from PySide6 import __version__ as v; "
            "from PySide6.QtGui import QGuiApplication; "
            "app = QGuiApplication(['intentd-doctor']); print(app.platformName(), v)")
HEADLESS = ("the daemon needs no display, but the desktop app does: run it in a graphical "
            "session, over `ssh -X`, or here with `QT_QPA_PLATFORM=vnc intentd-gui` and a VNC "
            "viewer on port 5900 (QT_QPA_PLATFORM=offscreen is for tests)")
REINSTALL = ("reinstall intentd, whose dependencies include PySide6: "
             "`pip install --force-reinstall intentd`")
QT_LIBRARIES = ("install the libraries the `qt libraries` check names (Qt's own message names "
                "only the first it misses), or choose a platform that works with "
                "QT_QPA_PLATFORM (xcb, wayland)")


def check_git() -> CheckResult:
    git = shutil.which("git")
    if git is None:
        return fail("git", "git is not on PATH",
                    "install git (Debian/Ubuntu: `sudo apt install git`, Fedora: "
                    "`sudo dnf install git`, macOS: `xcode-select --install`)")
    try:
        out = subprocess.run([git, "--version"], capture_output=True, text=True, timeout=10,
                             check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return fail("git", f"{git} does not run: {exc}", "reinstall git")
    return ok("git", f"{out.stdout.strip()} at {git}")


def check_qt(env: Mapping[str, str] | None = None, timeout: float = 30.0) -> CheckResult:
    """PySide6 imports, and a display (or QT_QPA_PLATFORM) lets the app start.

    No display is a warning, not a failure: a headless machine may run the daemon alone."""
    env = os.environ if env is None else env
    needs_display = sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd"))
    has_display = env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM")
    if needs_display and not has_display:
        if importlib.util.find_spec("PySide6") is None:
            return fail("qt", "PySide6 is not installed", REINSTALL)
        return warn("qt", "no display: neither DISPLAY nor WAYLAND_DISPLAY nor QT_QPA_PLATFORM "
                          "is set", HEADLESS)
    try:
        out = subprocess.run([sys.executable, "-c", QT_PROBE], capture_output=True, text=True,
                             timeout=timeout, env=dict(env), check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return fail("qt", f"starting Qt failed: {exc}", HEADLESS)
    if out.returncode == 0 and out.stdout.strip():
        name, _, version = out.stdout.strip().rpartition("\n")[2].partition(" ")
        return ok("qt", f"PySide6 {version}, platform {name!r}")
    if "No module named 'PySide6" in out.stderr:
        return fail("qt", "PySide6 is not installed", REINSTALL)
    lines = [line for line in out.stderr.strip().splitlines() if line.strip()]
    return fail("qt", "Qt cannot start: " + (" / ".join(lines[-3:]) or f"exit {out.returncode}"),
                QT_LIBRARIES)


def check_state_folder(home: Path | None = None) -> CheckResult:
    """Checkpoints and ledgers hold copies of files and commands: only their owner may read them.
    The folder and the ones intentd makes in it (workspaces/, one per workspace) are checked."""
    folder = home or state_home()
    try:
        st = folder.stat()
    except FileNotFoundError:
        return ok("state folder", f"{folder} will be created on first use, private")
    except OSError as exc:
        return fail("state folder", f"{folder}: {exc.strerror}",
                    f"check the permissions of {folder.parent}")
    problem = private_problem(folder, st, 0o700) or _open_subfolder(folder)
    if problem:
        return fail("state folder", problem[0] + " (it holds copies of your files)", problem[1])
    if not os.access(folder, os.W_OK | os.X_OK):
        return fail("state folder", f"{folder} is not writable", f"`chmod u+rwx {folder}`")
    return ok("state folder", f"{folder} is yours and private")


def _open_subfolder(home: Path) -> tuple[str, str] | None:
    """The problem of the first folder under home (two levels down) open to others, if any."""
    try:
        levels = [*home.iterdir(), *(home / "workspaces").glob("*")]
        for path in sorted(levels):
            st = path.lstat()
            if stat.S_ISDIR(st.st_mode):
                problem: tuple[str, str] | None = private_problem(path, st, 0o700)
                if problem:
                    return problem
    except OSError as exc:
        return f"{home}: {exc.strerror}", f"check the permissions of {home}"
    return None


def check_user_service(unit_dir: Path | None = None) -> CheckResult:
    """An installed service must still point at an intentd that exists."""
    unit = (unit_dir or user_unit_dir()) / SERVICE_UNIT
    if not unit.is_file():
        return skip("user service", "not installed (optional: `intentd install-user-service` "
                                    "has systemd start the daemon on demand)")
    command = _exec_start(unit.read_text(encoding="utf-8", errors="replace"))
    if not command:
        return fail("user service", f"{unit} has no ExecStart=", "`intentd install-user-service`")
    program = Path(command[0])
    if not (program.is_file() and os.access(program, os.X_OK)):
        return fail("user service", f"{unit} runs {program}, which is not there any more",
                    "point it at this installation: `intentd install-user-service`")
    return ok("user service", f"{unit} runs {' '.join(command)}")


def _exec_start(text: str) -> list[str]:
    for line in text.splitlines():
        if line.startswith("ExecStart="):
            value = line.partition("=")[2].replace("%%", "%").replace("$$", "$")
            try:
                return shlex.split(value)
            except ValueError:
                return []
    return []


def check_sandbox() -> CheckResult:
    """Whether commands intentd runs are confined to the intent's scope (Landlock)."""
    status = sandbox_status()
    if not status.available:
        return warn("sandbox", status.summary,
                    "use Linux 5.13 or later with Landlock enabled (it is in the default lsm= of "
                    "most distributions; check `cat /sys/kernel/security/lsm`)")
    if status.abi < NETWORK_ABI:
        return warn("sandbox", status.summary,
                    f"Linux 6.7 or later (Landlock ABI {NETWORK_ABI}) also confines TCP")
    return ok("sandbox", status.summary)
