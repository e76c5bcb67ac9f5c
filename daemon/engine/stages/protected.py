"""Stage 5: agents never write a person's files (`.orchestration/**`, `.clineignore`,
`.rooignore`, at any depth) or any `.git/**`, whatever the scope says."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.policy.globs import fold
from intentd.daemon.policy.persons import persons_path


def is_protected(relative: str) -> bool:
    """Compared caseless on every file system: on a case-insensitive one `.GIT/config` is git's
    config, and a case-folding folder (ext4 `casefold`, a mounted volume) may sit anywhere below
    a case-sensitive root. No real project needs to write a `.Git/` of its own."""
    return persons_path(relative) or ".git" in fold(relative).split("/")


class ProtectedPathsStage:
    name = "protected"

    def check(self, ctx: CallContext) -> Decision | None:
        if not ctx.destructive:
            return None
        for path in ctx.writes():
            if path.relative is not None and is_protected(path.relative):
                return Decision.deny(self.name, f"{path.relative} is protected: agents may not "
                                                "write a person's files (.orchestration/, "
                                                ".clineignore, .rooignore: an agent must not widen "
                                                "its own scope or rules) or any .git/ folder")
        return None
