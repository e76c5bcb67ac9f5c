"""Shell command policy: parse a command line, find every simple command it runs (through
wrappers, `bash -c`, substitutions and functions), and decide it against the user's rules."""
