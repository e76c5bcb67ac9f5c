"""`intentd checkpoints restore` through the running daemon, so that every view sees it at once."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.checkpoints.model import RestoreResult

Run = Callable[[argparse.Namespace], int]
Print = Callable[[argparse.Namespace, Any], int]


class _Restored:
    """What the printing of a restore asks of a store, answered with the daemon's result."""

    def __init__(self, result: RestoreResult) -> None:
        self.result = result

    def restore(self, checkpoint_id: str, *, path: str | None = None) -> RestoreResult:
        return self.result


def through_daemon(direct: Run, show: Print) -> Run:
    """Restore through the daemon when one answers on the default socket (its store is the one
    the app shows, and it announces the safety checkpoint), and not at all when it refuses
    (an agent's process asking: the ledger records the refusal, and must be right); with no
    daemon, or for another --state-dir, restore in the store directly as before."""
    def run(args: argparse.Namespace) -> int:
        if args.state_dir is not None:
            return direct(args)
        answer = _ask_daemon((args.workspace or Path.cwd()).resolve(), args.checkpoint_id,
                             args.path)
        if answer is None:
            return direct(args)
        if isinstance(answer, str):
            print(f"intentd checkpoints: {answer}", file=sys.stderr)
            return 1
        return show(args, _Restored(answer))
    return run


def _ask_daemon(root: Path, checkpoint_id: str, path: str | None) -> RestoreResult | str | None:
    """The daemon's restore result, its refusal as text, or None when no daemon answers."""
    from intentd.daemon.client import Client, DaemonUnavailable, RpcError, UntrustedDaemon

    params: dict[str, Any] = {"workspace": str(root), "checkpoint_id": checkpoint_id}
    if path is not None:
        params["path"] = path
    try:
        with Client(protocol.default_socket_path(), timeout=300) as client:
            client.initialize("intentd-checkpoints")
            done = client.call(protocol.CHECKPOINTS_RESTORE, params)
    except (DaemonUnavailable, UntrustedDaemon, OSError, TimeoutError):
        return None
    except RpcError as exc:  # a refusal is never worked around in the store behind its back
        if exc.code == protocol.PERSON_ONLY:
            return f"the daemon refused: {exc.message}"
        return str(exc.message)
    return RestoreResult(str(done["checkpoint_id"]), str(done["safety_checkpoint_id"]),
                         tuple(done["restored"]), tuple(done["deleted"]),
                         tuple((str(p), str(why)) for p, why in done["skipped"]))
