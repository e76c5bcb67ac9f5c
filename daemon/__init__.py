"""intentd: a local daemon that gates an AI coding agent's tool calls by intent."""

__version__ = "0.1.0"
