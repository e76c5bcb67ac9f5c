"""The person's own files: the intents, the policy and the access rules in `.orchestration/`,
and the `.clineignore` / `.rooignore` intentd honours. No agent's scope reaches them, and no
ignore rule hides them from checkpoints (so none can hide a change to them from the audit)."""

from __future__ import annotations

from intentd.daemon.policy.globs import fold
from intentd.daemon.utils.workspaces import PERSONS_FOLDER

__all__ = ["PERSONS_FILES", "PERSONS_FOLDER", "persons_path"]

PERSONS_FILES = (".clineignore", ".rooignore")


def persons_path(rel: str) -> bool:
    """Whether workspace path rel is a person's folder, a file in it, or one of a person's
    files, at any depth: a folder below may be a workspace of its own (a monorepo's package),
    whose intents and policy an agent with scope over it must not rewrite either. Caseless: on
    a case-insensitive file system `.ORCHESTRATION/` is the same folder."""
    parts = fold(rel).split("/")
    return PERSONS_FOLDER in parts or parts[-1] in PERSONS_FILES
