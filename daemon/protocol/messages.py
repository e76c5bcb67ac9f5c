"""The typed wire shapes: the results and notifications the daemon sends and its clients read.

The daemon builds these and sends `to_json()`; the desktop app (and any client) reads them
back with `from_json()`, which never raises on untrusted input. Each shape is declared once,
here. docs/protocol.md's shape table is rendered from these classes
(`python -m intentd.daemon.protocol.doc`), and a test keeps the two equal.
Pure: the standard library only, since every client process imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.protocol.codec import OMIT_EMPTY, Message, Nullable, Shape

COVERAGE_MODES = ("watched", "partial", "scanning")


# -- shared ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConfigError(Nullable):
    """A problem with an .orchestration file: where, and what."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Intent(Message):
    id: str
    name: str
    status: str
    owned_scope: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    acceptance_criteria: tuple[str, ...] = ()
    selectable: bool = False
    extra: dict[str, Any] = field(default_factory=dict, metadata=OMIT_EMPTY)


# -- the connection ----------------------------------------------------------------------------

@dataclass(frozen=True)
class SandboxInfo(Message):
    confined: bool  # false: commands run unconfined, `summary` says why
    landlock_abi: int
    summary: str


@dataclass(frozen=True)
class Initialized(Message):
    protocol_version: int
    server: str
    pid: int
    sandbox: SandboxInfo
    agent_process: AgentProcessNote | None = field(default=None, metadata=OMIT_EMPTY)


@dataclass(frozen=True)
class Subscribed(Message):
    subscribed: tuple[str, ...]
    approver: bool  # this connection answers approvals
    approvers: int


@dataclass(frozen=True)
class Closed(Message):
    closed: bool


# -- a call ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolInfo(Message):
    name: str
    description: str
    input_schema: dict[str, Any]
    kind: str  # read | edit | command | meta


@dataclass(frozen=True)
class ToolsList(Message):
    tools: tuple[ToolInfo, ...]


@dataclass(frozen=True)
class Reported(Message):
    recorded: bool
    scope_audit: dict[str, Any] = field(default_factory=dict, metadata=OMIT_EMPTY)


@dataclass(frozen=True)
class Decision(Message):
    decision: str  # allow | ask | deny
    stage: str
    reason: str


@dataclass(frozen=True)
class ToolOutput(Message):
    """What a tool gave back, for the agent (a refusal: ok false, the reason as output)."""

    ok: bool
    output: str
    data: dict[str, Any] = field(default_factory=dict, metadata=OMIT_EMPTY)


@dataclass(frozen=True)
class CallAnswer(Message):
    """`tools/call`'s answer; `tools/authorize`'s has no `result` (the client runs the tool)."""

    call_id: str
    decision: str  # allow | deny (tools/authorize: also ask, for the agent's own prompt)
    stage: str
    reason: str
    result: ToolOutput | None = field(default=None, metadata=OMIT_EMPTY)
    checkpoint_id: str | None = None
    approved_by: str | None = None  # auto | person | grant ID | ...
    feedback: str | None = None  # what the person said with their answer


@dataclass(frozen=True)
class IntentSelected(Message):
    decision: Decision
    context: str | None  # the intent's context for the agent, when selected


# -- approvals ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Approval(Message):
    """A call waiting for a person (`approvals/requested`, `approvals/list`)."""

    id: str
    workspace: str
    session_id: str
    agent: str
    intent_id: str | None
    tool: str
    args: dict[str, Any]
    stage: str
    reason: str
    diff: str | None  # the unified diff a write would apply; args' long texts are then cut
    created_at: float
    batch: str | None = None
    call_id: str = ""
    native_prompt: bool = False  # the agent can ask the person in its own prompt

    @property
    def target(self) -> str:
        """What the call acts on: a path, a command, or the first arguments."""
        for key in ("path", "command", "cmd", "url", "server_name"):
            if isinstance(self.args.get(key), str):
                return str(self.args[key])
        return ", ".join(f"{k}={v!r}"[:60] for k, v in list(self.args.items())[:2])

    @property
    def target_line(self) -> str:
        """The first line of the target: what fits a table cell or a heading."""
        return self.target.splitlines()[0] if self.target else ""

    @property
    def session_label(self) -> str:
        return f"{self.session_id} ({self.agent or 'unknown agent'})"


@dataclass(frozen=True)
class ApprovalResolved(Message):
    approval_id: str
    resolution: str  # approved | rejected | withdrawn | timeout | stopping | handed_off
    feedback: str | None
    workspace: str


@dataclass(frozen=True)
class ApprovalsList(Message):
    approvals: tuple[Approval, ...]
    approvers: int  # connected approvers


@dataclass(frozen=True)
class Responded(Message):
    resolved: bool
    answered: tuple[str, ...]  # those still waiting when the answer came
    grant: dict[str, Any] = field(default_factory=dict, metadata=OMIT_EMPTY)  # added | queued


@dataclass(frozen=True)
class ApproversChanged(Message):
    approvers: int


# -- the ledger --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolIntent(Message):
    """What was asked: written before the call is decided."""

    id: str  # the call id
    time: str  # ISO 8601, UTC
    session: str
    agent: str
    mode: str
    workspace: str
    intent_id: str | None
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    args_sha256: str = ""


@dataclass(frozen=True)
class Timing(Message):
    started_at: str
    decided_ms: float
    execution_ms: float


@dataclass(frozen=True)
class ToolReceipt(Message):
    """What happened."""

    result: str  # success | error | not_run
    output_sha256: str | None = None
    data: dict[str, Any] = field(default_factory=dict)  # a command's sandbox, scope_audit, ...
    files_before: dict[str, str | None] = field(default_factory=dict)
    files_after: dict[str, str | None] = field(default_factory=dict)
    checkpoint_id: str | None = None
    checkpoint_coverage: str = ""  # "" when the file watcher saw every change
    timing: Timing | None = None
    host: str = ""


@dataclass(frozen=True)
class ChainLink(Message):
    seq: int
    prev: str  # the sha256 of the line before


@dataclass(frozen=True)
class LedgerEntry(Message):
    """One call's line in the ledger; also the `tools/finished` notification."""

    v: int
    intent: ToolIntent
    decision: str
    stage: str
    reason: str
    approved_by: str | None
    receipt: ToolReceipt
    chain: ChainLink | None = field(default=None, metadata=OMIT_EMPTY)  # added when written


@dataclass(frozen=True)
class LedgerPage(Message):
    entries: tuple[LedgerEntry, ...]
    older: str | None  # the cursor of the page before, for `before`


@dataclass(frozen=True)
class ChainReport(Message):
    """`ledger/verify`: whether the ledger's hash chain holds, and its first break."""

    ok: bool
    lines: int
    chained: int
    unchained: int  # lines written before the chain began
    problem: str | None
    kind: str | None  # changed | removed | inserted | damaged
    at: str | None  # the line the problem names (`ledger.2.jsonl:17`)
    torn: str | None  # a last line cut short by a crash: not a break
    head_seq: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class BlameAuthor(Message):
    call_id: str
    intent_id: str | None
    session: str | None
    agent: str | None
    tool: str | None
    time: str | None
    intent_name: str | None


@dataclass(frozen=True)
class Blame(Message):
    """`trace/blame`: for each line of a file now, the call that last wrote it."""

    path: str
    lines: int
    runs: tuple[tuple[int, int, int | None], ...]  # first line, last line, index in authors
    authors: tuple[BlameAuthor, ...]


@dataclass(frozen=True)
class ToolStarted(Message):
    call_id: str
    session_id: str
    tool: str
    checkpoint_id: str | None


# -- checkpoints -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Checkpoint(Message):
    id: str
    created_at: float
    label: str
    kind: str  # files | command
    files: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why) left out
    coverage: str = ""  # how it found changes, when not by the file watcher alone (a scan)


@dataclass(frozen=True)
class WatchCoverage(Nullable):
    """How much of a workspace the file watcher sees now."""

    mode: str  # watched | partial (some folders scanned instead) | scanning (all are)
    watched_folders: int
    unwatched: tuple[str, ...]  # the first 20
    unwatched_count: int
    reason: str
    overflows: int = 0
    summary: str = ""

    def fits(self) -> bool:
        return self.mode in COVERAGE_MODES

    @property
    def blind_spots(self) -> bool:
        """Whether some command checkpoints scan instead of reading what the watcher saw."""
        return self.mode != "watched"


@dataclass(frozen=True)
class CheckpointsList(Message):
    checkpoints: tuple[Checkpoint, ...]
    coverage: WatchCoverage | None


@dataclass(frozen=True)
class FileDiff(Message):
    path: str
    status: str  # modified | added | deleted
    unified: str


@dataclass(frozen=True)
class CheckpointsDiff(Message):
    diffs: tuple[FileDiff, ...]


@dataclass(frozen=True)
class Restored(Message):
    checkpoint_id: str
    safety_checkpoint_id: str  # restoring it undoes the restore
    restored: tuple[str, ...]
    deleted: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (path, why) left alone


@dataclass(frozen=True)
class CheckpointCreated(Message):
    workspace: str
    checkpoint_id: str
    label: str
    coverage: str


# -- sessions, workspaces, intents -------------------------------------------------------------

@dataclass(frozen=True)
class AgentProcessNote(Message):
    recorded: bool
    note: str | None


@dataclass(frozen=True)
class SessionOpened(Message):
    """`sessions/open`'s answer and the `sessions/opened` notification."""

    session_id: str
    workspace: str
    agent: str
    mode: str  # act | plan
    agent_process: AgentProcessNote | None = field(default=None, metadata=OMIT_EMPTY)


@dataclass(frozen=True)
class SessionClosed(Message):
    session_id: str
    workspace: str


@dataclass(frozen=True)
class Session(Message):
    session_id: str
    workspace: str
    agent: str
    mode: str
    intent_id: str | None


@dataclass(frozen=True)
class SessionsList(Message):
    sessions: tuple[Session, ...]


@dataclass(frozen=True)
class WorkspaceSummary(Message):
    workspace: str
    sessions: int
    pending: int  # approvals waiting
    errors: tuple[ConfigError, ...]


@dataclass(frozen=True)
class WorkspacesList(Message):
    workspaces: tuple[WorkspaceSummary, ...]


@dataclass(frozen=True)
class IntentsList(Message):
    workspace: str
    intents: tuple[Intent, ...]
    error: ConfigError | None  # the file is broken: `intents` are the last good ones
    warnings: tuple[str, ...]
    selected: dict[str, str]  # session id: intent id


@dataclass(frozen=True)
class IntentsChanged(Message):
    workspace: str
    intents: tuple[Intent, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class IntentsError(Message):
    workspace: str
    error: ConfigError | None  # None: fixed


# -- which method answers with which shape -----------------------------------------------------

RESULTS: dict[str, type[Shape]] = {
    protocol.INITIALIZE: Initialized,
    protocol.SESSIONS_CLOSE: Closed,
    protocol.EVENTS_SUBSCRIBE: Subscribed,
    protocol.TOOLS_LIST: ToolsList,
    protocol.TOOLS_REPORT: Reported,
    protocol.APPROVALS_RESPOND: Responded,
    protocol.CHECKPOINTS_RESTORE: Restored,
    protocol.LEDGER_VERIFY: ChainReport,
    protocol.TRACE_BLAME: Blame,
    protocol.TOOLS_CALL: CallAnswer,
    protocol.TOOLS_AUTHORIZE: CallAnswer,
    protocol.INTENTS_SELECT: IntentSelected,
    protocol.SESSIONS_OPEN: SessionOpened,
    protocol.SESSIONS_LIST: SessionsList,
    protocol.WORKSPACES_LIST: WorkspacesList,
    protocol.INTENTS_LIST: IntentsList,
    protocol.APPROVALS_LIST: ApprovalsList,
    protocol.CHECKPOINTS_LIST: CheckpointsList,
    protocol.CHECKPOINTS_DIFF: CheckpointsDiff,
    protocol.LEDGER_QUERY: LedgerPage,
}

NOTIFICATION_PARAMS: dict[str, type[Shape]] = {
    protocol.APPROVALS_REQUESTED: Approval,
    protocol.APPROVALS_RESOLVED: ApprovalResolved,
    protocol.APPROVERS_CHANGED: ApproversChanged,
    protocol.TOOLS_STARTED: ToolStarted,
    protocol.TOOLS_FINISHED: LedgerEntry,
    protocol.CHECKPOINTS_CREATED: CheckpointCreated,
    protocol.SESSIONS_OPENED: SessionOpened,
    protocol.SESSIONS_CLOSED: SessionClosed,
    protocol.INTENTS_CHANGED: IntentsChanged,
    protocol.INTENTS_ERROR: IntentsError,
}
