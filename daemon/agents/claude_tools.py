"""Old home of Claude Code's tool mapping, kept while server/claude_http.py imports from it;
the mapping is agents/hooks/claude_tools.py."""

from intentd.daemon.agents.hooks.claude_tools import Mapped, command_cwd, map_call

__all__ = ["Mapped", "command_cwd", "map_call"]
