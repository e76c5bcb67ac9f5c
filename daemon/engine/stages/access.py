"""Stage 6: ignored paths are refused for every tool; paths outside the workspace are external."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.paths import PathRefused, resolve

IGNORE_SOURCES = ".orchestration/ignore, .clineignore or .rooignore"


class AccessStage:
    name = "access"

    def check(self, ctx: CallContext) -> Decision | None:
        ignore = ctx.config.ignore
        for path in (*ctx.paths, *ctx.writes()):
            if path.relative is None:
                ctx.not_auto.append(f"{path.raw} is outside the workspace")
            elif ignore.ignores(path.relative):
                return Decision.deny(self.name, f"{path.relative} is ignored by {IGNORE_SOURCES}; "
                                                "no tool may read or write it")
        verdict = ctx.command()
        if verdict is not None:
            self._check_command_args(ctx, verdict.analysis.path_args)
        return None

    @staticmethod
    def _check_command_args(ctx: CallContext, path_args: tuple[str, ...]) -> None:
        """A command naming an ignored or external path may run, but never without a person."""
        cwd = ctx.cwd.absolute if ctx.cwd else ctx.root
        for raw in path_args:
            try:
                path = resolve(ctx.root, raw, cwd)
            except PathRefused:
                ctx.not_auto.append(f"argument {raw[:80]!r} cannot be resolved")
                continue
            if path.relative is None:
                ctx.not_auto.append(f"argument {raw[:80]!r} names a path outside the workspace")
            elif ctx.config.ignore.ignores(path.relative):
                ctx.not_auto.append(f"argument {raw[:80]!r} names an ignored path")
