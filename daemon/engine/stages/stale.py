"""Stage 8: an edit of an existing file needs the session to have read it as it is now."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.tools.base import ToolKind
from intentd.daemon.tools.fileio import sha256_file


class StaleFileStage:
    name = "stale_file"

    def check(self, ctx: CallContext) -> Decision | None:
        if ctx.kind is not ToolKind.EDIT:
            return None
        for path in ctx.paths:
            current = sha256_file(path.absolute)
            if current is None:
                if ctx.name == "replace_in_file":
                    return Decision.deny(self.name, f"{path.shown} does not exist: create it with "
                                                    "write_to_file")
                continue  # a new file: nothing to be stale against
            seen = ctx.session.read_hashes.get(path.absolute)
            if seen is None:
                return Decision.deny(self.name, f"stale file: read it again ({path.shown} exists "
                                                "and this session has not read it)")
            if seen != current:
                return Decision.deny(self.name, f"stale file: read it again ({path.shown} changed "
                                                "on disk since this session read it)")
        return None
