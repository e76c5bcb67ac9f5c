"""From intent to line: the ledger's hash chain, blame by intent, Agent Trace export, telemetry."""
