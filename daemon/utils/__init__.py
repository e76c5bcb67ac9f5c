"""The bottom layer: helpers every other package may use (YAML files, paths, the state folder).

Nothing here imports from the rest of intentd; a test keeps it that way.
"""
