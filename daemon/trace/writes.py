"""What a call wrote, line by line: file contents kept before and after, hunks for its receipt."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from intentd.daemon.trace.contents import ContentStore
from intentd.daemon.trace.lines import text_hunks
from intentd.daemon.utils.reading import read_regular

log = logging.getLogger(__name__)


class WriteTracer:
    """One per workspace. `before` replaces a plain hash of the files a call may write (it keeps
    their text too); `after` returns the receipt's `lines`: per file written, the hunks that
    turned the text before into the text after, and the git revision the work sits on."""

    def __init__(self, root: Path, store: ContentStore) -> None:
        self.root, self.store = root, store

    def before(self, paths: Iterable[str]) -> dict[str, str | None]:
        return {path: self.store.keep(path) for path in paths}

    def after(self, before: dict[str, str | None], written: dict[str, str | None],
              kept: bool = False) -> dict[str, Any]:
        """`kept`: the digests in `written` came from keep() (a report), so the texts kept are
        the ones hashed and the files need no second read."""
        lines: dict[str, Any] = {}
        for path, digest in written.items():
            old = before.get(path)
            if digest is None or digest == old:
                continue
            try:
                found = self._hunks(path, old, digest, kept)
            except Exception:  # the trace is a convenience: it never costs a call its record
                log.exception("could not trace the lines written to %s", path)
                continue
            if found is not None:
                lines[path] = [list(h) for h in found]
        return lines

    def _hunks(self, path: str, old: str | None, new: str,
               kept: bool) -> list[tuple[int, int, int, int]] | None:
        earlier = self.store.get(old)
        if earlier is None or (not kept and self.store.keep(path) != new):
            return None  # not kept (binary, large) or changed again since: no line-level trace
        later = self.store.get(new)
        if later is None:
            return None
        return text_hunks(earlier, later)


def git_revision(root: Path) -> str | None:
    """The commit HEAD names, read from the files (no git process on a call's path)."""
    git = root / ".git"
    try:
        head = read_regular(git / "HEAD", 4096).decode().strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        ref_file = git / ref
        if ref_file.is_file():
            return read_regular(ref_file, 4096).decode().strip() or None
        for line in read_regular(git / "packed-refs").decode().splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except (OSError, UnicodeDecodeError):
        return None
    return None
