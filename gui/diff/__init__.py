"""Diff rendering: parse unified diffs, highlight them, show them unified or side by side."""
