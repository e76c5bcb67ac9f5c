"""Grants: a person's remembered answer to the ask-a-person step, for a session or a workspace."""

# Nothing is imported here: `intentd grants` and every `intentd hook` run load this package, and
# the model brings the command analysis (bashlex), a quarter of a second to import.
