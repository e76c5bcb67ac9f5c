"""`intentd install-user-service` / `uninstall-user-service`: the units in place, or what to do."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from intentd.daemon.setup.systemctl import Systemctl
from intentd.daemon.setup.units import (
    SERVICE_UNIT,
    SOCKET_UNIT,
    UNIT_NAMES,
    daemon_command,
    render_units,
    user_unit_dir,
)
from intentd.daemon.tools.fileio import atomic_write

ENABLE_STEPS = (("daemon-reload",), ("enable", "--now", SOCKET_UNIT))
DISABLE_STEPS = (("disable", "--now", SOCKET_UNIT, SERVICE_UNIT), ("daemon-reload",))
WANTS_LINK = Path("sockets.target.wants") / SOCKET_UNIT  # what `enable` creates


def install(args: argparse.Namespace, systemctl: Systemctl) -> int:
    """Write both units and enable the socket; with no usable systemd, write nothing."""
    unit_dir = user_unit_dir()
    units = render_units(daemon_command(), os.environ.get("PATH"))
    if args.dry_run:
        for name, text in units.items():
            print(f"# {unit_dir / name}\n{text}")
        _print_steps("Then it would run:", ENABLE_STEPS)
        return 0
    if not args.no_systemctl:
        reason = systemctl.unavailable_reason()
        if reason:
            _explain_no_systemd(reason)
            return 1
    updating = any((unit_dir / name).exists() for name in units)
    unit_dir.mkdir(parents=True, exist_ok=True)
    for name, text in units.items():
        # systemd must never read a half-written unit
        atomic_write(str(unit_dir / name), text, mode=0o644)
        print(f"wrote {unit_dir / name}")
    if args.no_systemctl:
        _print_steps("To start it on demand, run:", ENABLE_STEPS)
        return 0
    if not _run_steps(systemctl, ENABLE_STEPS):
        return 1
    print(f"enabled {SOCKET_UNIT}: the daemon starts on the first connection; "
          "check it with `intentd doctor`")
    if updating:
        print("A daemon already running keeps its old settings until "
              f"`systemctl --user restart {SERVICE_UNIT}`.")
    return 0


def uninstall(args: argparse.Namespace, systemctl: Systemctl) -> int:
    """Stop and disable through systemd when it answers, then remove the unit files."""
    unit_dir = user_unit_dir()
    present = [unit_dir / name for name in UNIT_NAMES if (unit_dir / name).exists()]
    if not present:
        print(f"nothing to remove: no intentd units in {unit_dir}")
        return 0
    if args.dry_run:
        _print_steps("It would run:", DISABLE_STEPS[:1])
        for path in present:
            print(f"  rm {path}")
        return 0
    reason = "--no-systemctl" if args.no_systemctl else systemctl.unavailable_reason()
    if reason is None:
        # Not loaded or already stopped is fine: the point is that nothing runs afterwards.
        systemctl.user(*DISABLE_STEPS[0])
    link = unit_dir / WANTS_LINK
    if link.is_symlink():  # left by an `enable` that systemctl could not undo
        link.unlink()
    for path in present:
        path.unlink()
        print(f"removed {path}")
    if reason is None:
        _run_steps(systemctl, DISABLE_STEPS[1:])
    else:
        print(f"systemctl was not run ({reason}): a daemon it started runs on until "
              f"`systemctl --user stop {SOCKET_UNIT} {SERVICE_UNIT}` or the end of the session.")
    return 0


def _run_steps(systemctl: Systemctl, steps: tuple[tuple[str, ...], ...]) -> bool:
    for step in steps:
        done = systemctl.user(*step)
        if done.returncode != 0:
            print(f"intentd: `{_shown(step)}` failed: {(done.stderr or done.stdout).strip()}",
                  file=sys.stderr)
            return False
    return True


def _explain_no_systemd(reason: str) -> None:
    err = sys.stderr
    print(f"intentd install-user-service: {reason}; nothing was written.", file=err)
    print("Instead, either:\n"
          "  - start the daemon yourself (e.g. from your session's autostart): `intentd serve`;\n"
          "  - or write the units anyway, then enable them where systemd runs:\n"
          "    `intentd install-user-service --no-systemctl`, then "
          + " and ".join(f"`{_shown(step)}`" for step in ENABLE_STEPS) + ";\n"
          "  - `intentd install-user-service --dry-run` prints the units.", file=err)


def _print_steps(title: str, steps: tuple[tuple[str, ...], ...]) -> None:
    print(title)
    for step in steps:
        print(f"  {_shown(step)}")


def _shown(step: tuple[str, ...]) -> str:
    return " ".join(["systemctl", "--user", *step])

