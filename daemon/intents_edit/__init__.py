"""Edits to `.orchestration/active_intents.yaml` made by the daemon for the person, and scope previews."""
