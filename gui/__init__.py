"""The intentd desktop app (PySide6)."""
