"""Doctor checks of the daemon's socket: its folder and file are private, and a daemon answers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from intentd.daemon import __version__
from intentd.daemon.client import Client, DaemonUnavailable, RpcError, UntrustedDaemon
from intentd.daemon.setup.doctor.result import CheckResult, fail, ok, private_problem, warn

START = ("start it: `intentd serve` in a terminal, or `intentd install-user-service` once "
         "so that systemd starts it on demand")
RESTART = ("restart it: `systemctl --user restart intentd.service` (or stop the `intentd serve` "
           "you started and run it again); its log: `journalctl --user -u intentd`")


def check_socket(path: Path, timeout: float = 10.0) -> list[CheckResult]:
    """The socket folder (0700, mine), the socket (0600, mine) and an `initialize` answer."""
    folder = path.parent
    try:
        folder_stat = folder.lstat()
    except FileNotFoundError:
        return [fail("daemon", f"no daemon has run here: {folder} does not exist", START)]
    if not stat.S_ISDIR(folder_stat.st_mode):
        return [fail("socket folder", f"{folder} is not a folder", f"remove it: `rm {folder}`")]
    results = [_private("socket folder", folder, folder_stat, 0o700)]
    try:
        socket_stat = path.lstat()
    except FileNotFoundError:
        return [*results, fail("daemon", f"no daemon is running: no socket at {path}", START)]
    if not stat.S_ISSOCK(socket_stat.st_mode):
        return [*results, fail("socket", f"{path} is not a socket",
                               f"remove it (`rm {path}`), then {START}")]
    results.append(_private("socket", path, socket_stat, 0o600))
    results.append(_initialize(path, timeout))
    return results


def _private(name: str, path: Path, st: os.stat_result, wanted: int) -> CheckResult:
    problem = private_problem(path, st, wanted)
    if problem:
        return fail(name, *problem)
    return ok(name, f"{path} is yours, mode {stat.S_IMODE(st.st_mode):04o}")


def _initialize(path: Path, timeout: float) -> CheckResult:
    try:
        with Client(path, timeout=timeout) as client:
            answer = client.initialize(f"intentd-doctor {__version__}")
    except UntrustedDaemon as exc:  # every client refuses it, so the doctor does too
        return fail("daemon", f"clients will not talk to it: {exc}", "fix the checks above")
    except DaemonUnavailable as exc:
        return fail("daemon", f"the socket exists but no daemon answers ({exc}); a daemon that "
                              "stopped without cleaning up leaves it behind", START)
    except TimeoutError:
        return fail("daemon", "the daemon took the connection but did not answer `initialize` "
                              f"within {timeout:g} s", RESTART)
    except RpcError as exc:
        return fail("daemon", f"the daemon refused `initialize`: {exc}",
                    f"the daemon and this intentd ({__version__}) differ; {RESTART}")
    except (OSError, ValueError) as exc:
        return fail("daemon", f"talking to the daemon failed: {exc}", RESTART)
    server = str(answer.get("server", "?"))
    detail = f"{server} (pid {answer.get('pid', '?')}) answers at {path}"
    if server != f"intentd {__version__}":
        return warn("daemon", detail + f", but this command is intentd {__version__}",
                    f"to run the installed version, {RESTART}")
    return ok("daemon", detail)
