"""`intentd init`: write the commented `.orchestration/` files into a workspace, never over one."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from intentd.daemon.setup.templates import TEMPLATES

FOLDER = ".orchestration"


@dataclass(frozen=True)
class InitResult:
    written: tuple[Path, ...] = ()
    existing: tuple[Path, ...] = ()  # non-empty means nothing was written

    @property
    def ok(self) -> bool:
        return not self.existing


def init_workspace(root: Path) -> InitResult:
    """Write every template, or none: if any target exists, nothing is written at all.

    All-or-nothing is the least surprising outcome: after a success the three files are
    the templates, and after a refusal the workspace is exactly as it was."""
    folder = root / FOLDER
    targets = [folder / name for name in TEMPLATES]
    existing = tuple(path for path in targets if path.exists() or path.is_symlink())
    if existing:
        return InitResult(existing=existing)
    folder.mkdir(exist_ok=True)
    written: list[Path] = []
    try:
        for path, text in zip(targets, TEMPLATES.values(), strict=True):
            # "x" fails if the file appeared since the check above: still never overwrite.
            with path.open("x", encoding="utf-8") as out:
                written.append(path)
                out.write(text)
    except FileExistsError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        return InitResult(existing=(Path(exc.filename),))
    return InitResult(written=tuple(written))


def run(args: argparse.Namespace) -> int:
    if args.print:
        sys.stdout.write(TEMPLATES[args.print])
        return 0
    root: Path = args.workspace
    if not root.is_dir():
        print(f"intentd init: workspace {root} is not a folder", file=sys.stderr)
        return 2
    if (root / FOLDER).exists() and not (root / FOLDER).is_dir():
        print(f"intentd init: {root / FOLDER} exists and is not a folder", file=sys.stderr)
        return 1
    result = init_workspace(root)
    if not result.ok:
        _report_refusal(result)
        return 1
    for path in result.written:
        print(f"wrote {path}")
    print(f"\nNext: edit {root / FOLDER / 'active_intents.yaml'} (give the example intent your "
          "own id, name and owned_scope, and set `status: IN_PROGRESS`), then run "
          "`intentd doctor`.")
    return 0


def _report_refusal(result: InitResult) -> None:
    err = sys.stderr
    print("intentd init: these files exist already; nothing was written:", file=err)
    for path in result.existing:
        print(f"  {path}", file=err)
    print("Move them aside to start afresh, or keep them and print a template to compare, "
          "e.g. `intentd init --print policy.yaml`.", file=err)
