"""`intentd doctor`: checks of the daemon, this machine and a workspace, each saying what to fix."""
