"""Decide whether a `sed` invocation only prints: `-n`, no -i, and a script of printing commands."""

from __future__ import annotations

from collections.abc import Sequence

from intentd.daemon.policy.command.options import long_name, matches_long

# Commands that only print, move through the input or edit the pattern/hold space.
_PLAIN_COMMANDS = frozenset("pPlqQnNdDgGhHxz=")
_S_FLAGS = frozenset("gpiImM0123456789")
_SAFE_LETTERS = frozenset("nErsuzb")
_QUIET_LONG = ("quiet", "silent")
_SAFE_LONG = ("regexp-extended", "separate", "unbuffered", "null-data", "zero-terminated",
              "posix", "debug", "sandbox", "binary", "follow-symlinks", "line-length")


def check_sed(args: Sequence[str]) -> str | None:
    """Why `sed ARGS` is not read-only, or None when it only prints."""
    scripts: list[str] = []
    operands: list[str] = []
    quiet = False
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            operands.extend(args[index:])
            break
        if word.startswith("--"):
            name = long_name(word)
            if matches_long(word, ("in-place", "file")):
                return f"`sed {word}` edits files or runs a script file"
            if len(name) >= 2 and "expression".startswith(name):
                if "=" in word:
                    scripts.append(word.split("=", 1)[1])
                elif index < len(args):
                    scripts.append(args[index])
                    index += 1
                continue
            if matches_long(word, _QUIET_LONG):
                quiet = True
            elif not matches_long(word, _SAFE_LONG):
                return f"`sed {word}` is not an option known to be read-only"
            elif matches_long(word, ("line-length",)) and "=" not in word:
                index += 1  # its value: `--line-length -- …` is not the end of the options
            continue
        if word.startswith("-") and word != "-":
            problem, quiet_here, script, used_next = _short(word, args[index:])
            if problem:
                return problem
            quiet = quiet or quiet_here
            if script is not None:
                scripts.append(script)
            index += used_next
            continue
        operands.append(word)
    if not scripts:
        if not operands:
            return "`sed` without a script"
        scripts.append(operands.pop(0))
    if not quiet:
        return "`sed` without -n: only printing scripts run with -n are treated as read-only"
    for script in scripts:
        if not (script_only_prints(script, False) and script_only_prints(script, True)):
            return f"the sed script `{script}` may write files or run commands"
    return None


def _short(word: str, rest: Sequence[str]) -> tuple[str | None, bool, str | None, int]:
    """One short cluster: (problem, quiet, script given with -e, words consumed after it)."""
    quiet = False
    for position, letter in enumerate(word[1:], start=1):
        if letter == "n":
            quiet = True
        elif letter == "i":
            return "`sed -i` edits files in place", False, None, 0
        elif letter == "f":
            return "`sed -f` runs a script file that is not checked", False, None, 0
        elif letter in "el":
            attached = word[position + 1:]
            if attached:
                return None, quiet, attached if letter == "e" else None, 0
            if not rest:
                return f"`sed -{letter}` without its argument", False, None, 0
            return None, quiet, rest[0] if letter == "e" else None, 1
        elif letter not in _SAFE_LETTERS:
            return f"`sed -{letter}` is not an option known to be read-only", False, None, 0
    return None, quiet, None, 0


def script_only_prints(script: str, bracket_aware: bool) -> bool:
    """Whether a sed script uses only printing commands, and `s` without the w or e flags.

    Checked twice by the caller, with and without treating the delimiter inside `[…]` as
    literal (GNU and BSD sed disagree), so a script passes only if both readings are safe.
    """
    parser = _ScriptParser(script, bracket_aware)
    try:
        return parser.run()
    except IndexError:
        return False


class _ScriptParser:
    def __init__(self, script: str, bracket_aware: bool) -> None:
        self.text = script
        self.at = 0
        self.bracket_aware = bracket_aware

    def run(self) -> bool:
        depth = 0
        while True:
            self._skip(" \t\n;")
            if self.at >= len(self.text):
                return depth == 0
            if self.text[self.at] == "}":
                depth -= 1
                self.at += 1
                if depth < 0:
                    return False
                continue
            if not self._address():
                return False
            command = self.text[self.at]
            self.at += 1
            if command == "{":
                depth += 1
            elif not self._command(command):
                return False

    def _command(self, command: str) -> bool:
        if command in _PLAIN_COMMANDS:
            self._skip(" \t")
            if command in "qQlL":
                self._skip("0123456789")
            return self._at_end()
        if command == "#":
            end = self.text.find("\n", self.at)
            self.at = len(self.text) if end < 0 else end
            return True
        if command in "sy":
            delimiter = self.text[self.at]
            if delimiter in "\n\\":
                return False
            self.at += 1
            self._until(delimiter)
            self._until(delimiter)
            if command == "s":
                while self.at < len(self.text) and self.text[self.at] in _S_FLAGS:
                    self.at += 1
            return self._at_end()
        return False

    def _address(self) -> bool:
        for part in range(2):
            if part and self.text[self.at:self.at + 1] != ",":
                break
            if part:
                self.at += 1
                self._skip(" \t")
                if self.text[self.at] in "+~":
                    self.at += 1
            char = self.text[self.at]
            if char.isdigit():
                self._skip("0123456789")
                if self.text[self.at] == "~":
                    self.at += 1
                    self._skip("0123456789")
            elif char == "$":
                self.at += 1
            elif char in "/\\":
                if char == "\\":
                    self.at += 1
                delimiter = self.text[self.at]
                self.at += 1
                self._until(delimiter)
                self._skip("IM")
            self._skip(" \t")
        if self.text[self.at] == "!":
            self.at += 1
            self._skip(" \t")
        return True

    def _until(self, delimiter: str) -> None:
        """Move past the next unescaped `delimiter` (IndexError if there is none)."""
        in_bracket = False
        while True:
            char = self.text[self.at]
            self.at += 1
            if char == "\\":
                self.at += 1
            elif self.bracket_aware and char == "[" and not in_bracket:
                in_bracket = True
            elif in_bracket and char == "]":
                in_bracket = False
            elif char == delimiter and not in_bracket:
                return

    def _skip(self, chars: str) -> None:
        while self.at < len(self.text) and self.text[self.at] in chars:
            self.at += 1

    def _at_end(self) -> bool:
        self._skip(" \t")
        return self.at >= len(self.text) or self.text[self.at] in ";\n}"
