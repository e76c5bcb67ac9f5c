"""Old home of the Claude Code hook, kept while server/claude_http.py still imports from it.

The hook now lives in agents/hooks/ (core.py for the flow, claude.py for Claude Code's
answers); import from there.
"""

from intentd.daemon.agents.hooks.claude import ADAPTER, call_key, decision, succeeded

SELECT_HINT = ADAPTER.select_hint

__all__ = ["SELECT_HINT", "call_key", "decision", "succeeded"]
