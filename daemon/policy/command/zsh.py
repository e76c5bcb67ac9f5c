"""zsh's expansions that bash's grammar reads as plain text.

The analysis parses with bash's grammar, but the shell that runs a command may be zsh: an
agent's own shell on macOS, `zsh -lc` from Codex, or a `zsh -c` inside the command. zsh
expands `$=NAME`, `$~NAME`, `$^NAME` and `$#NAME` (the value, split, as a pattern, per
element, or its length) and turns a word `=NAME` into the path of the program NAME; bash
reads each as text. The `$` forms are found in the source as written, quotes included: a
quoted one is harmless, and only makes the check stricter than it needs to be.
"""

from __future__ import annotations

import re

# `$` with zsh's flag characters, then a name (braced forms are refused by the parser stage)
_FLAGGED = re.compile(r"\$([=~^#+]+)([A-Za-z_][A-Za-z0-9_]*)")
# A word that starts, unquoted, with `=` and a program name: zsh's `=ls` is `/usr/bin/ls`
_EQUALS = re.compile(r"=[A-Za-z0-9_]")


def zsh_names(source: str) -> list[str]:
    """Names whose values zsh expands through `$=`, `$~`, `$^` or `$#` (not `$+`, which
    only tells whether the name is set)."""
    return [name for flags, name in _FLAGGED.findall(source) if flags.strip("+")]


def is_zsh_program_path(raw: str) -> bool:
    """Whether zsh turns the word `raw` (as written) into a program's path (`=ls`)."""
    return _EQUALS.match(raw) is not None
