"""zsh's expansions that bash's grammar reads as plain text.

The analysis parses with bash's grammar, but the shell that runs a command may be zsh: an
agent's own shell on macOS, `zsh -lc` from Codex, or a `zsh -c` inside the command. zsh
expands `$=NAME`, `$~NAME`, `$^NAME` and `$#NAME` (the value, split, as a pattern, per
element, or its length) and turns a word `=NAME` into the path of the program NAME; bash
reads each as text. The source is scanned as written, quotes included: a quoted form is
harmless, and only makes the check stricter than it needs to be.
"""

from __future__ import annotations

import re

# `$` with zsh's flag characters, then a name (braced forms are refused by the parser stage)
_FLAGGED = re.compile(r"\$([=~^#+]+)([A-Za-z_][A-Za-z0-9_]*)")
# A word that starts with `=` followed by a program name: zsh's `=ls` is `/usr/bin/ls`
_EQUALS = re.compile(r"(?:^|[\s;&|(<>])(=[A-Za-z0-9_][A-Za-z0-9_.+-]*)")


def zsh_names(source: str) -> list[str]:
    """Names whose values zsh expands through `$=`, `$~`, `$^` or `$#` (not `$+`, which
    only tells whether the name is set)."""
    return [name for flags, name in _FLAGGED.findall(source) if flags.strip("+")]


def zsh_program_paths(source: str) -> list[str]:
    """Words zsh would turn into a program's path, known only when it runs (`=ls`)."""
    return _EQUALS.findall(source)
