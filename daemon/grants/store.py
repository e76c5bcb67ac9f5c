"""Where grants live: workspace grants in the daemon's private state, session grants in memory."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from intentd.daemon.engine.context import CallContext
from intentd.daemon.grants.model import SESSION, Grant
from intentd.daemon.utils.statedir import ensure_private, workspace_state_dir

log = logging.getLogger(__name__)
MAX_GRANTS = 500  # per workspace: beyond it the oldest go (a person never makes this many)


class GrantBook:
    """Grants by workspace. A revoked grant is gone before revoke() returns: the next call
    is decided without it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._by_workspace: dict[str, list[Grant]] = {}
        self._lock = threading.RLock()

    def find(self, ctx: CallContext) -> Grant | None:
        with self._lock:
            grants = list(self._grants(ctx.root))
        return next((g for g in grants if g.fits(ctx)), None)

    def listing(self, workspace: str | None = None) -> list[Grant]:
        with self._lock:
            roots = [workspace] if workspace else list(self._by_workspace)
            return [g for root in roots for g in self._grants(root)]

    def add(self, grant: Grant) -> Grant:
        with self._lock:
            grants = self._grants(grant.workspace)
            grants.append(grant)
            del grants[:-MAX_GRANTS]
            self._save(grant.workspace)
        return grant

    def revoke(self, grant_id: str) -> Grant | None:
        with self._lock:
            for root, grants in self._by_workspace.items():
                found = next((g for g in grants if g.id == grant_id), None)
                if found is not None:
                    grants.remove(found)
                    self._save(root)
                    return found
        return None

    def end_session(self, session_id: str) -> None:
        with self._lock:
            for grants in self._by_workspace.values():
                grants[:] = [g for g in grants if g.session_id != session_id]

    def _grants(self, root: str) -> list[Grant]:
        grants = self._by_workspace.get(root)
        if grants is None:
            grants = self._by_workspace[root] = self._load(root)
        return grants

    def _path(self, root: str) -> Path:
        folder: Path = workspace_state_dir(Path(root), self.home)
        return folder / "grants.json"

    def _load(self, root: str) -> list[Grant]:
        try:
            raw = json.loads(self._path(root).read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable grants of %s: %s", root, exc)
            return []
        grants = []
        for item in raw.get("grants", []) if isinstance(raw, dict) else []:
            try:
                grant = Grant.from_json(item)
            except (KeyError, TypeError, ValueError):
                log.warning("skipping a malformed grant in %s", self._path(root))
                continue
            if grant.workspace == root and grant.lifetime != SESSION:
                grants.append(grant)
        return grants

    def _save(self, root: str) -> None:
        """Workspace grants only, written whole and renamed into place, readable by the user
        alone."""
        path = self._path(root)
        ensure_private(path.parent, self.home)
        kept = [g.to_json() for g in self._by_workspace.get(root, []) if g.lifetime != SESSION]
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"v": 1, "grants": kept}, out, indent=1)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
