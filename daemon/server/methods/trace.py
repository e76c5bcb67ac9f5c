"""ledger/verify and trace/blame: whether the ledger's chain holds, and a file's lines by intent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.protocol import messages
from intentd.daemon.server import wire
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.rpc import MethodTable, Params, bad_params
from intentd.daemon.trace.blame import BlameLine, blame
from intentd.daemon.trace.chain import against_head, verify
from intentd.daemon.trace.contents import MAX_KEPT_BYTES
from intentd.daemon.utils.statedir import workspace_state_dir

MAX_BLAME_BYTES = MAX_KEPT_BYTES


def register(table: MethodTable, core: DaemonCore) -> None:
    async def ledger_verify(conn: Any, params: Params) -> dict[str, Any]:
        workspace = core.workspace(params)
        ledger = await core.in_thread(core.engine.ledger, workspace)  # opening it may wait
        # The head is read first: lines appended during the walk only make the files run past it.
        seq, digest = ledger.head()
        report = await core.in_thread(lambda: against_head(verify(ledger.path), seq, digest))
        return wire.chain_report(report).to_json()

    async def trace_blame(conn: Any, params: Params) -> dict[str, Any]:
        workspace = core.workspace(params)
        path = _inside(workspace, params.text("path"))
        state = workspace_state_dir(workspace.root, core.engine.home)
        store = core.engine.tracing.store(workspace.root)  # texts not yet written included
        lines = await core.in_thread(lambda: blame(state / "ledger.jsonl", store, path))
        return _runs(workspace, path, lines)

    table.register(protocol.LEDGER_VERIFY, ledger_verify)
    table.register(protocol.TRACE_BLAME, trace_blame)


def _inside(workspace: Workspace, given: str) -> Path:
    """The file named, if it is a file of the workspace an agent could read: blame answers with
    authors only (the caller reads the text itself), but still tells only of workspace files."""
    raw = Path(given)
    path = (raw if raw.is_absolute() else workspace.root / raw).resolve()
    try:
        relative = path.relative_to(workspace.root).as_posix()
    except ValueError:
        raise bad_params("path", "must name a file inside the workspace") from None
    if workspace.config.ignore.ignores(relative):
        raise bad_params("path", f"{relative} is ignored by the workspace's rules")
    if not path.is_file():
        raise bad_params("path", f"{relative} is not a file")
    if path.stat().st_size > MAX_BLAME_BYTES:
        raise bad_params("path", f"{relative} is larger than {MAX_BLAME_BYTES} bytes")
    return path


def _runs(workspace: Workspace, path: Path, lines: list[BlameLine]) -> dict[str, Any]:
    """Consecutive lines by the same call as one run: (first line, last line, author index)."""
    authors: list[messages.BlameAuthor] = []
    index: dict[str, int] = {}
    names = {i.id: i.name for i in workspace.config.intents.intents}
    runs: list[tuple[int, int, int | None]] = []
    for line in lines:
        at: int | None = None
        if line.author is not None:
            key = line.author.call_id + "\0" + (line.author.time or "")
            if key not in index:
                index[key] = len(authors)
                authors.append(wire.blame_author(line.author,
                                                 names.get(line.author.intent_id or "")))
            at = index[key]
        if runs and runs[-1][2] == at and runs[-1][1] == line.number - 1:
            runs[-1] = (runs[-1][0], line.number, at)
        else:
            runs.append((line.number, line.number, at))
    return messages.Blame(path=path.relative_to(workspace.root).as_posix(), lines=len(lines),
                          runs=tuple(runs), authors=tuple(authors)).to_json()
