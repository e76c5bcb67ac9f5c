"""The person's own files: the intents, the policy and the access rules in `.orchestration/`,
and the `.clineignore` / `.rooignore` intentd honours. No agent's scope reaches them, and no
ignore rule hides them from checkpoints (so none can hide a change to them from the audit)."""

from __future__ import annotations

from intentd.daemon.policy.globs import fold

PERSONS_FOLDER, PERSONS_FILES = ".orchestration", (".clineignore", ".rooignore")


def persons_path(rel: str) -> bool:
    """Whether workspace path rel is the person's folder, a file in it, or one of the person's
    files. Caseless: on a case-insensitive file system `.ORCHESTRATION/` is the same folder."""
    caseless = fold(rel)
    return (caseless == PERSONS_FOLDER or caseless.startswith(PERSONS_FOLDER + "/")
            or caseless in PERSONS_FILES)
