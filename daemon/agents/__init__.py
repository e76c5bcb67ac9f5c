"""How real agents reach the pipeline: the Anthropic runner, the MCP bridge, the Claude Code hook."""
