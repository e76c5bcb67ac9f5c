"""Widgets: the main window and one pane per part of the app."""
