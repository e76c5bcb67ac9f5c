"""First run: `intentd init`, the systemd user units, and `intentd doctor`."""
