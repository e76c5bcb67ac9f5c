"""The engine: intents, sessions, the pipeline of stages and the ledger."""
