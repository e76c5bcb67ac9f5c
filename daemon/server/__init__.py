"""The daemon: a Unix-socket JSON-RPC server in front of the engine, with the approval queue."""
