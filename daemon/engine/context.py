"""Everything one tool call is decided on: the call, its session, one config snapshot, resolved paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from intentd.daemon.engine.intents import Intent
from intentd.daemon.engine.session import Session
from intentd.daemon.engine.workspace import WorkspaceConfig
from intentd.daemon.policy.command.rules import CommandVerdict, decide_command
from intentd.daemon.tools.base import Tool, ToolKind
from intentd.daemon.utils.paths import PathRefused, ResolvedPath, resolve


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
    _command: CommandVerdict | None = None
    _writes: tuple[ResolvedPath, ...] | None = None

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
