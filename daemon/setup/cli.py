"""The first-run commands: `init`, `install-user-service`, `uninstall-user-service`, `doctor`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from intentd.daemon.setup.templates import TEMPLATES


def register(subparsers: Any) -> None:
    init = subparsers.add_parser(
        "init", help="write a commented .orchestration/ (intents, policy, ignore) into a workspace",
        description="Writes .orchestration/active_intents.yaml, policy.yaml and ignore. If any of "
                    "them exists already, nothing is written and the command fails.")
    init.add_argument("--workspace", type=Path, default=Path.cwd(), help="default: this folder")
    init.add_argument("--print", choices=list(TEMPLATES), metavar="FILE",
                      help=f"print one template ({', '.join(TEMPLATES)}) and write nothing")
    init.set_defaults(func=_run_init)

    for name, verb, func in [("install-user-service", "install and enable", _run_install),
                             ("uninstall-user-service", "disable and remove", _run_uninstall)]:
        parser = subparsers.add_parser(
            name, help=f"{verb} the systemd user units that start the daemon on demand",
            description="The units go to $XDG_CONFIG_HOME/systemd/user (default "
                        "~/.config/systemd/user); intentd.socket starts intentd.service on the "
                        "first connection. The service runs with the PATH of the shell that "
                        "installs it: install again after changing PATH.")
        parser.add_argument("--dry-run", action="store_true",
                            help="print what would be written and run; change nothing")
        parser.add_argument("--no-systemctl", action="store_true",
                            help="only write or remove the unit files; never run systemctl")
        parser.set_defaults(func=func)

    doctor = subparsers.add_parser(
        "doctor", help="check the daemon, this machine and a workspace, and say what to fix",
        description="Exit code 0 when no check fails (warnings do not fail), 1 otherwise.")
    doctor.add_argument("--workspace", type=Path, default=Path.cwd(), help="default: this folder")
    doctor.add_argument("--socket", type=Path, help="default: the daemon's default socket")
    doctor.add_argument("--json", action="store_true", help="one JSON object on stdout")
    doctor.set_defaults(func=_run_doctor)


# Imported on use, so that `intentd --version` and the other commands stay fast.
# (int() because mypy sees the intentd.* imports through the editable finder as Any.)
def _run_init(args: argparse.Namespace) -> int:
    from intentd.daemon.setup.init import run

    return int(run(args))


def _run_install(args: argparse.Namespace) -> int:
    from intentd.daemon.setup.service import install
    from intentd.daemon.setup.systemctl import Systemctl

    return int(install(args, Systemctl()))


def _run_uninstall(args: argparse.Namespace) -> int:
    from intentd.daemon.setup.service import uninstall
    from intentd.daemon.setup.systemctl import Systemctl

    return int(uninstall(args, Systemctl()))


def _run_doctor(args: argparse.Namespace) -> int:
    from intentd.daemon.setup.doctor.run import run

    return int(run(args))
