"""`intentd check`: a dry run of the pipeline over JSON lines, one decision line out per call."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine is imported when the command runs: `intentd` starts fast
    from intentd.daemon.engine.decision import Decision
    from intentd.daemon.engine.engine import Engine
    from intentd.daemon.engine.session import Session
    from intentd.daemon.engine.workspace import WorkspaceConfig

MAX_LINE_CHARS = 8 * 1024 * 1024


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check", help="dry-run tool calls through the pipeline (JSON lines in, decisions out)",
        description="Each input line is {\"tool\": NAME, \"args\": {...}}; the lines form one "
                    "session. Nothing destructive runs.")
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="default: this folder")
    parser.add_argument("--policy", type=Path, help="default: .orchestration/policy.yaml")
    parser.add_argument("--json", action="store_true", help="JSON lines output (the default)")
    parser.add_argument("--batch", default="-", metavar="FILE", help="input file, - for stdin")
    parser.add_argument("--mode", choices=["act", "plan"], default="act")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from intentd.daemon.engine.engine import Engine
    from intentd.daemon.engine.session import Mode

    if not args.workspace.is_dir():
        print(f"intentd check: workspace {args.workspace} is not a folder", file=sys.stderr)
        return 2
    if args.policy is not None and not args.policy.is_file():
        print(f"intentd check: policy file {args.policy} not found", file=sys.stderr)
        return 2
    logging.getLogger("intentd.daemon.engine").setLevel(logging.ERROR)  # told once, below
    engine = Engine(record=False, checkpoints=False)
    try:
        session = engine.open_session(args.workspace, agent="check", mode=Mode(args.mode),
                                      policy_path=args.policy)
        _report_config(session.workspace.config, session.workspace.intents_path)
        stream: IO[str] = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")
        with stream:
            out = sys.stdout
            for line in decide_lines(engine, session, stream):
                out.write(line + "\n")
                out.flush()
    finally:
        engine.close()
    return 0


def _report_config(config: WorkspaceConfig, intents_path: Path) -> None:
    """Every problem of the config files, one `file:line: message` a line, before any decision."""
    if not config.intents.exists and config.intents_error is None:
        print(f"intentd check: no intents file ({intents_path}): every tool that changes something "
              "is refused; `intentd init` writes one to edit", file=sys.stderr)
    for error in config.errors:
        for line in error.splitlines():
            print(f"intentd check: {line}", file=sys.stderr)


def decide_lines(engine: Engine, session: Session, lines: Iterable[str]) -> Iterator[str]:
    for raw in lines:
        if not raw.strip():
            continue
        tool, decision = decide_line(engine, session, raw)
        yield json.dumps({"tool": tool, **decision.to_json()}, ensure_ascii=False)


def decide_line(engine: Engine, session: Session, raw: str) -> tuple[Any, Decision]:
    from intentd.daemon.engine.decision import Decision
    from intentd.daemon.engine.lifecycle import NOBODY, Execution

    if len(raw) > MAX_LINE_CHARS:
        return None, Decision.deny("validate", f"line longer than {MAX_LINE_CHARS} characters")
    try:
        call = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, Decision.deny("validate", f"not JSON: {exc}")
    if not isinstance(call, dict) or "tool" not in call:
        return None, Decision.deny("validate", 'each line must be {"tool": NAME, "args": {...}}')
    tool = call["tool"] if isinstance(call["tool"], str) else None
    # one call of the session: decided, counted, and what a dry run lets happen (nothing runs,
    # nobody is asked: an "ask" is printed as such)
    outcome = engine.call(session, call["tool"], call.get("args", {}), approver=NOBODY,
                          execution=Execution.DRY_RUN)
    return tool, outcome.decision
