"""The JSON-RPC methods, one module per noun."""
