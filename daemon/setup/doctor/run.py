"""Runs every doctor check in order and prints the results, as text for a person or as JSON."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.setup.doctor.agents import check_agents
from intentd.daemon.setup.doctor.daemon import check_socket
from intentd.daemon.setup.doctor.qt_libraries import check_qt_libraries
from intentd.daemon.setup.doctor.result import CheckResult
from intentd.daemon.setup.doctor.system import (
    check_git,
    check_qt,
    check_sandbox,
    check_state_folder,
    check_user_service,
)
from intentd.daemon.setup.doctor.workspace import (
    check_checkpoints,
    check_tree_listing,
    check_watch_coverage,
    check_workspace,
)

LABELS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "skip": "--"}


def run_checks(socket_path: Path, workspace: Path) -> list[CheckResult]:
    return [
        *check_socket(socket_path),
        check_user_service(),
        check_state_folder(),
        check_git(),
        check_qt(),
        check_qt_libraries(),
        check_sandbox(),
        *check_workspace(workspace),
        check_checkpoints(workspace),
        check_watch_coverage(workspace),
        check_tree_listing(),
        *check_agents(workspace),
    ]


def run(args: argparse.Namespace) -> int:
    socket_path = args.socket or protocol.default_socket_path()
    results = run_checks(socket_path, args.workspace.absolute())
    passed = all(result.status != "fail" for result in results)
    if args.json:
        print(json.dumps({"ok": passed, "checks": [r.to_json() for r in results]}, indent=2))
    else:
        print(format_text(results))
        failed = sum(1 for result in results if result.status == "fail")
        print("\nall checks passed" if passed else f"\n{failed} check(s) failed: see `fix:` above")
    return 0 if passed else 1


def format_text(results: Sequence[CheckResult]) -> str:
    width = max(len(result.name) for result in results)
    lines = []
    for result in results:
        lines.append(f"{LABELS[result.status]:<4}  {result.name:<{width}}  {result.detail}")
        if result.fix and result.status in ("fail", "warn"):
            lines.append(f"{'':<4}  {'':<{width}}  fix: {result.fix}")
    return "\n".join(lines)
