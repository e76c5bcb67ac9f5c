"""`intentd ledger verify`, `intentd trace export` and `intentd blame`: the ledger, from the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon.utils.statedir import state_home, workspace_state_dir


def register(subparsers: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", type=Path, help="default: this folder")
    common.add_argument("--state-dir", type=Path, help="intentd's state folder (default: where "
                                                       "the daemon keeps it)")
    ledger = subparsers.add_parser("ledger", help="check a workspace's ledger")
    actions = ledger.add_subparsers(dest="ledger_action", metavar="ACTION")
    verify = actions.add_parser("verify", parents=[common], help="walk the ledger's hash chain; "
                                "exit 0 only when it holds")
    verify.add_argument("--json", action="store_true", help="JSON output")
    verify.set_defaults(func=_guard(run_verify))
    ledger.set_defaults(func=lambda _args: _usage(ledger))
    trace = subparsers.add_parser("trace", help="share what agents wrote, in open formats")
    trace_actions = trace.add_subparsers(dest="trace_action", metavar="ACTION")
    export = trace_actions.add_parser("export", parents=[common], help="Agent Trace records "
                                      "(JSON Lines) of the calls that wrote lines")
    export.add_argument("--since", help="a date or time (ISO 8601), or a git revision")
    export.add_argument("--out", type=Path, help="default: standard output")
    export.set_defaults(func=_guard(run_export))
    trace.set_defaults(func=lambda _args: _usage(trace))
    blame = subparsers.add_parser("blame", parents=[common], help="each line of a file with "
                                  "the intent, session and call that last wrote it")
    blame.add_argument("file", type=Path)
    blame.add_argument("--json", action="store_true", help="JSON output")
    blame.set_defaults(func=_guard(run_blame))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except OSError as exc:
            print(f"intentd: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "),
                  file=sys.stderr)
        except ValueError as exc:
            print(f"intentd: {exc}", file=sys.stderr)
        return 1
    return run


def _root(args: argparse.Namespace) -> Path:
    root = (args.workspace or Path.cwd()).resolve()
    if not root.is_dir():
        raise ValueError(f"workspace {root} is not a folder")
    return root


def _state(args: argparse.Namespace, root: Path) -> Path:
    return workspace_state_dir(root, args.state_dir or state_home())


def run_verify(args: argparse.Namespace) -> int:
    from intentd.daemon.trace.chain import verify

    root = _root(args)
    report = verify(_state(args, root) / "ledger.jsonl")
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0 if report.ok else 1
    for note in report.notes:
        print(f"note: {note}")
    if not report.ok:
        print(f"BROKEN ({report.kind}): {report.problem}")
        print(f"the chain holds for the {report.chained} line(s) before it")
        return 1
    print(f"the chain holds: {report.chained} chained line(s), {report.lines} in all")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from intentd.daemon.trace.contents import ContentStore
    from intentd.daemon.trace.export import records, since_time, write_records

    root = _root(args)
    since = since_time(root, args.since) if args.since else None
    state = _state(args, root)
    found = records(root, state / "ledger.jsonl", ContentStore(state / "contents"), since)
    if args.out is None:
        write_records(found, sys.stdout)
        return 0
    with open(args.out, "w", encoding="utf-8") as out:
        count = write_records(found, out)
    print(f"{count} trace record(s) written to {args.out}", file=sys.stderr)
    return 0


def run_blame(args: argparse.Namespace) -> int:
    from intentd.daemon.trace.blame import blame
    from intentd.daemon.trace.contents import ContentStore

    root = _root(args)
    path = (args.file if args.file.is_absolute() else Path.cwd() / args.file).resolve()
    state = _state(args, root)
    if not (state / "ledger.jsonl").exists():
        print(f"note: no ledger for {root} (no agent has worked here through intentd)",
              file=sys.stderr)
    lines = blame(state / "ledger.jsonl", ContentStore(state / "contents"), path)
    if args.json:
        print(json.dumps([{"line": b.number, "text": b.text,
                           "author": b.author.to_json() if b.author else None} for b in lines]))
        return 0
    width = len(str(len(lines)))
    for line in lines:
        print(f"{_who(line.author):<44} {line.number:>{width}}) {line.text}")
    return 0


def _who(author: Any) -> str:
    if author is None:
        return "-"
    when = (author.time or "")[:16].replace("T", " ")
    return f"{author.intent_id or '(no intent)'} {author.session or ''} {author.call_id} {when}"
