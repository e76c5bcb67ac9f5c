"""`intentd checkpoints list|diff|restore`: a workspace's checkpoints from the terminal."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from intentd.daemon.policy.ignore import load_ignore_rules
from intentd.daemon.utils.statedir import checkpoints_dir

from .errors import CheckpointError, UnknownCheckpoint, WorkspaceMissing

if TYPE_CHECKING:  # the store (git, dulwich, sqlite) loads when a checkpoints command runs
    from .store import CheckpointStore

PROG = "intentd checkpoints"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("checkpoints", help="list, diff and restore a workspace's checkpoints",
                                   description=__doc__)
    actions = parser.add_subparsers(dest="checkpoints_action", metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", type=Path, help="default: this folder")
    common.add_argument("--state-dir", type=Path, help="the store (default: where the daemon keeps it)")
    common.add_argument("--json", action="store_true", help="JSON output")
    listing = actions.add_parser("list", parents=[common], help="checkpoints, oldest first")
    listing.set_defaults(func=_guard(run_list))
    diff = actions.add_parser("diff", parents=[common], help="unified diff of a checkpoint")
    diff.add_argument("checkpoint_id", help="e.g. cp-000042 (or 42)")
    diff.add_argument("--path", help="one file or folder only")
    diff.add_argument("--against", choices=["current", "next"], default="current",
                      help="the workspace now (default) or the next checkpoint")
    diff.set_defaults(func=_guard(run_diff))
    restore = actions.add_parser("restore", parents=[common], help="bring files back (undoable)")
    restore.add_argument("checkpoint_id", help="e.g. cp-000042 (or 42)")
    restore.add_argument("--path", help="one file or folder only")
    from intentd.daemon.server.restore_relay import through_daemon  # the app sees it at once

    restore.set_defaults(func=through_daemon(_guard(run_restore), run_restore))
    parser.set_defaults(func=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _guard(fn: Callable[[argparse.Namespace, CheckpointStore], int]) -> Callable[[argparse.Namespace], int]:
    """Open the store, run, and turn every failure into one line on stderr and exit code 1."""
    def run(args: argparse.Namespace) -> int:
        try:
            store = _open(args)
            if store is None:
                return _no_store(args)
            try:
                return fn(args, store)
            finally:
                store.close()
        except CheckpointError as exc:
            print(f"{PROG}: {exc}", file=sys.stderr)
        except OSError as exc:
            print(f"{PROG}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        except Exception as exc:  # noqa: BLE001 - a person gets a line, never a traceback
            print(f"{PROG}: internal error: {exc!r}", file=sys.stderr)
        return 1
    return run


def _open(args: argparse.Namespace) -> CheckpointStore | None:
    """The workspace's store, or None when it has none yet (nothing is created just to look)."""
    root = (args.workspace or Path.cwd()).resolve()
    if not root.is_dir():
        raise WorkspaceMissing(f"workspace {root} does not exist (moved or deleted?)")
    state = args.state_dir or checkpoints_dir(root)  # where the engine keeps it
    if not (state / "manifest.sqlite3").is_file():
        return None
    rules = load_ignore_rules(root)  # .orchestration/ignore, as the engine applies it
    from .store import CheckpointStore

    return CheckpointStore(root, state, ignore_rules=lambda: rules, watch=False)


def _no_store(args: argparse.Namespace) -> int:
    if args.checkpoints_action == "list":
        print("[]" if args.json else "no checkpoints yet")
        return 0
    raise UnknownCheckpoint(f"no checkpoint {args.checkpoint_id}: this workspace has no checkpoints yet")


def run_list(args: argparse.Namespace, store: CheckpointStore) -> int:
    checkpoints = store.list()
    if args.json:
        print(json.dumps([c.to_json() for c in checkpoints], indent=2))
        return 0
    if not checkpoints:
        print("no checkpoints yet")
        return 0
    print(f"{'ID':<10} {'CREATED':<19} {'KIND':<7} {'FILES':>5}  LABEL")
    for c in checkpoints:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(c.created_at))
        skipped = f"  ({len(c.skipped)} skipped)" if c.skipped else ""
        print(f"{c.id:<10} {created:<19} {c.kind:<7} {len(c.files):>5}  {c.label}{skipped}")
    return 0


def run_diff(args: argparse.Namespace, store: CheckpointStore) -> int:
    diffs = store.diff(args.checkpoint_id, against=args.against, path=args.path)
    if args.json:
        print(json.dumps([d.to_json() for d in diffs], indent=2))
    elif diffs:
        sys.stdout.write("".join(d.unified for d in diffs))
    else:
        print("no differences")
    return 0


def run_restore(args: argparse.Namespace, store: CheckpointStore) -> int:
    """Exit code 1 when any path was left alone: the workspace is then not the checkpoint's."""
    result = store.restore(args.checkpoint_id, path=args.path)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(f"restored {len(result.restored)} file(s) and deleted {len(result.deleted)} "
              f"to match {result.checkpoint_id}")
        for path in result.restored:
            print(f"  restored {path}")
        for path in result.deleted:
            print(f"  deleted  {path}")
        for path, why in result.skipped:
            print(f"  left     {path}: {why}")
        print(f"undo with: intentd checkpoints restore {result.safety_checkpoint_id}")
    if not result.skipped:
        return 0
    print(f"{PROG}: {len(result.skipped)} path(s) left as they are, not as at "
          f"{result.checkpoint_id}: see `left` above", file=sys.stderr)
    return 1
