"""Plain domain state of the app (no widgets): what the daemon told us, as Qt signals."""
