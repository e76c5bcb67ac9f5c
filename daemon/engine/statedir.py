"""Where intentd keeps its state: outside every workspace, under the XDG state folder."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "intentd"


def workspace_state_dir(root: Path, home: Path | None = None) -> Path:
    """One folder per workspace, named so a person can tell which is which."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in root.name)[:40] or "root"
    return (home or state_home()) / "workspaces" / f"{name}-{digest}"
