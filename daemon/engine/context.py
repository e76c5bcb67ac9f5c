"""Everything one tool call is decided on: the call, its session, one config snapshot, resolved paths.

Stages read the context and never write it: the pipeline takes what each stage found
(`take`) before the next one runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from intentd.daemon.engine.intents import Intent
from intentd.daemon.engine.session import Session, Tally
from intentd.daemon.engine.workspace import WorkspaceConfig
from intentd.daemon.policy.command.rules import CommandVerdict, decide_command
from intentd.daemon.tools.base import Tool, ToolKind
from intentd.daemon.utils.paths import PathRefused, ResolvedPath, resolve

if TYPE_CHECKING:
    from intentd.daemon.engine.stages import Finding


@dataclass
class CallContext:
    session: Session
    config: WorkspaceConfig
    name: Any                 # untrusted until the validate stage has checked it
    args: Any
    batch: str | None = None  # the agent turn this call belongs to (rejection cascade)
    tool: Tool | None = None
    paths: tuple[ResolvedPath, ...] = ()
    cwd: ResolvedPath | None = None
    intent: Intent | None = None
    must_ask: str | None = None        # a stage's reason why a person must decide
    not_auto: list[str] = field(default_factory=list)  # reasons auto-approval is off for this call
    tally: Tally | None = None         # what counting the call changes in its session
    _command: CommandVerdict | None = None
    _writes: tuple[ResolvedPath, ...] | None = None

    def take(self, found: Finding) -> None:
        """What a stage found, for the stages after it (the pipeline's job, never a stage's)."""
        if found.tool is not None:  # validate's: the call as resolved
            self.tool, self.paths, self.cwd = found.tool, found.paths or (), found.cwd
        if found.name is not None:
            self.name = found.name
        if found.args is not None:
            self.args = found.args
        if found.intent is not None:
            self.intent = found.intent
        if found.must_ask is not None:
            self.must_ask = found.must_ask
        if found.not_auto:
            self.not_auto.extend(found.not_auto)
        if found.tally is not None:
            self.tally = found.tally if self.tally is None else self.tally.merged(found.tally)

    @property
    def root(self) -> str:
        return self.session.workspace.root_str

    @property
    def kind(self) -> ToolKind | None:
        return self.tool.kind if self.tool else None

    def command(self) -> CommandVerdict | None:
        """The command policy's verdict for execute_command (cached per call)."""
        if self.kind is not ToolKind.COMMAND:
            return None
        if self._command is None:
            self._command = decide_command(self.args["command"], self.config.policy.commands)
        return self._command

    @property
    def brief(self) -> bool:
        """Whether its work after the decision runs no program (no hook, no command), so ends
        in moments: the gates, a checkpoint of named files, a file tool, a receipt."""
        hooks = self.config.policy.hooks
        return self.kind is not ToolKind.COMMAND and not hooks.pre_tool and not hooks.post_tool

    @property
    def destructive(self) -> bool:
        if self.kind is ToolKind.COMMAND:
            verdict = self.command()
            return verdict is None or not verdict.analysis.read_only
        return self.tool is not None and self.tool.destructive

    def writes(self) -> tuple[ResolvedPath, ...]:
        """Paths the call writes, where known: a file tool's paths, a command's write targets."""
        if self._writes is None:
            self._writes = self._find_writes()
        return self._writes

    def _find_writes(self) -> tuple[ResolvedPath, ...]:
        if self.kind is ToolKind.EDIT:
            return self.paths
        verdict = self.command()
        if verdict is None:
            return ()
        cwd = self.cwd.absolute if self.cwd else self.root
        targets = []
        for target in verdict.analysis.write_targets:
            try:
                targets.append(resolve(self.root, target, cwd))
            except PathRefused:
                continue  # unresolvable targets keep the command destructive; a person decides
        return tuple(targets)

    def intents_lookup(self, intent_id: str) -> Intent | None:
        return self.config.intents.get(intent_id)
