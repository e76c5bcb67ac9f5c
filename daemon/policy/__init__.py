"""Pure policy code: shell-command analysis, ignore rules, auto-approval and hooks."""
