"""The intentd desktop app (PySide6): a client of the daemon's socket protocol, nothing more."""
