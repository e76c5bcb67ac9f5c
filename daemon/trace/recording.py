"""The engine's one link to tracing: file texts kept around each call, lines and spans recorded."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from intentd.daemon.tools.fileio import sha256_file
from intentd.daemon.trace.contents import ContentStore
from intentd.daemon.trace.writes import WriteTracer, git_revision
from intentd.daemon.utils.statedir import workspace_state_dir

if TYPE_CHECKING:
    from intentd.daemon.engine.context import CallContext
    from intentd.daemon.engine.engine import Evaluation, Outcome
    from intentd.daemon.trace.otel import CallSpans

log = logging.getLogger(__name__)


def contents_dir(root: Path, home: Path | None = None) -> Path:
    return workspace_state_dir(root, home) / "contents"


class CallTracing:
    """Kept by the engine. `before` hashes (and keeps) the files a call may write; `recorded`
    adds to a call's ledger entry the lines it wrote, and hands the call to telemetry."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._tracers: dict[Path, WriteTracer] = {}
        self._lock = threading.Lock()
        self.spans: CallSpans | None = _spans_from_environment()

    def tracer(self, root: Path) -> WriteTracer:
        with self._lock:
            found = self._tracers.get(root)
            if found is None:
                found = WriteTracer(root, ContentStore(contents_dir(root, self.home),
                                                       background=True))
                self._tracers[root] = found
            return found

    def before(self, ctx: CallContext, keep: bool) -> dict[str, str | None]:
        paths = [p.absolute for p in ctx.writes()]
        if not keep:
            return {path: sha256_file(path) for path in paths}
        return self.tracer(ctx.session.workspace.root).before(paths)

    def after(self, ctx: CallContext, paths: list[str], keep: bool) -> dict[str, str | None]:
        """The hashes of the files a client says it wrote (a report), their texts kept: one read
        of each, which `recorded` then trusts instead of reading the file again."""
        if not keep:
            return {path: sha256_file(path) for path in paths}
        return self.tracer(ctx.session.workspace.root).before(paths)

    def recorded(self, ev: Evaluation, outcome: Outcome, before: dict[str, str | None],
                 entry: dict[str, Any], keep: bool, kept_after: bool = False) -> None:
        result = outcome.result
        if keep and result is not None and result.written:
            root = ev.ctx.session.workspace.root
            lines = self.tracer(root).after(before, dict(result.written), kept=kept_after)
            if lines:
                entry["receipt"]["lines"] = lines
                entry["receipt"]["vcs_revision"] = git_revision(root)
        if self.spans is not None:
            try:
                self.spans.call_decided(entry)
            except Exception:  # telemetry never costs a call
                log.exception("could not hand the call to telemetry")

    def store(self, root: Path) -> ContentStore:
        """The workspace's kept texts, those still waiting to be written included."""
        return self.tracer(root).store

    def close(self) -> None:
        """Every kept text written (the receipts already name them), telemetry ended."""
        with self._lock:
            tracers = list(self._tracers.values())
        for tracer in tracers:
            tracer.store.close()
        if self.spans is not None:
            self.spans.shutdown()


def _spans_from_environment() -> CallSpans | None:
    from intentd.daemon.trace.otel import spans_from_environment

    return spans_from_environment()
