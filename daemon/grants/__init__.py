"""Grants: a person's remembered answer to the ask-a-person step, for a session or a workspace."""

from intentd.daemon.grants.model import Grant, GrantRefused, derive_grant
from intentd.daemon.grants.store import GrantBook

__all__ = ["Grant", "GrantBook", "GrantRefused", "derive_grant"]
