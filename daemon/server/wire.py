"""The daemon's values as the protocol's typed messages (intentd.daemon.protocol.messages).

The server's methods answer with these, so what goes on the wire is what the protocol declares
and docs/protocol.md shows; a value's own `to_json()` (for the CLI's output, the ledger) must
agree with them, which tests/server/test_wire_shapes.py checks.
"""

from __future__ import annotations

from intentd.daemon.checkpoints.model import Checkpoint, Coverage, FileDiff, RestoreResult
from intentd.daemon.engine.intents import Intent
from intentd.daemon.engine.session import Session
from intentd.daemon.engine.workspace import WorkspaceConfig
from intentd.daemon.protocol import messages as m
from intentd.daemon.sandbox.status import SandboxStatus
from intentd.daemon.trace.blame import Author
from intentd.daemon.trace.chain import ChainReport
from intentd.daemon.utils.yamlfile import ConfigError


def config_error(error: ConfigError | None) -> m.ConfigError | None:
    if error is None:
        return None
    folded = error.to_json()  # several problems of one file: their messages in one
    return m.ConfigError(file=error.path, line=error.line, message=str(folded["message"]))


def intent(item: Intent, selectable: bool) -> m.Intent:
    return m.Intent(id=item.id, name=item.name, status=item.status,
                    owned_scope=tuple(item.owned_scope), constraints=tuple(item.constraints),
                    acceptance_criteria=tuple(item.acceptance_criteria), selectable=selectable,
                    extra=dict(item.extra or {}))


def intents(config: WorkspaceConfig) -> tuple[m.Intent, ...]:
    """The intents as clients see them, each saying whether it can be selected now."""
    statuses = config.policy.selectable_statuses
    return tuple(intent(i, i.status in statuses) for i in config.intents.intents)


def session(item: Session) -> m.Session:
    return m.Session(session_id=item.id, workspace=item.workspace.root_str, agent=item.agent,
                     mode=item.mode.value, intent_id=item.intent_id)


def checkpoint(item: Checkpoint) -> m.Checkpoint:
    return m.Checkpoint(id=item.id, created_at=item.created_at, label=item.label, kind=item.kind,
                        files=tuple(item.files), skipped=tuple(item.skipped),
                        coverage=item.coverage)


def coverage(item: Coverage) -> m.WatchCoverage:
    unwatched = tuple(item.unwatched)
    return m.WatchCoverage(mode=item.mode, watched_folders=item.watched_folders,
                           unwatched=unwatched[:20], unwatched_count=len(unwatched),
                           reason=item.reason, overflows=item.overflows, summary=item.summary())


def file_diff(item: FileDiff) -> m.FileDiff:
    return m.FileDiff(path=item.path, status=item.status, unified=item.unified)


def restored(item: RestoreResult) -> m.Restored:
    return m.Restored(checkpoint_id=item.checkpoint_id,
                      safety_checkpoint_id=item.safety_checkpoint_id,
                      restored=tuple(item.restored), deleted=tuple(item.deleted),
                      skipped=tuple(item.skipped))


def sandbox(status: SandboxStatus) -> m.SandboxInfo:
    return m.SandboxInfo(confined=status.available, landlock_abi=status.abi,
                         summary=status.summary)


def chain_report(report: ChainReport) -> m.ChainReport:
    return m.ChainReport(ok=report.ok, lines=report.lines, chained=report.chained,
                         unchained=report.unchained, problem=report.problem, kind=report.kind,
                         at=str(report.at) if report.at else None,
                         torn=str(report.torn) if report.torn else None,
                         head_seq=report.head_seq, notes=tuple(report.notes))


def blame_author(author: Author, intent_name: str | None) -> m.BlameAuthor:
    return m.BlameAuthor(call_id=author.call_id, intent_id=author.intent_id,
                         session=author.session, agent=author.agent, tool=author.tool,
                         time=author.time, intent_name=intent_name)
