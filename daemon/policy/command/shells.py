"""See through a shell started as a command: `bash -c CODE`, `sh script.sh`, `bash <<EOF`."""

from __future__ import annotations

from dataclasses import dataclass

from intentd.daemon.policy.command.unwrap import Unwrap
from intentd.daemon.policy.command.words import Word

# Shells whose language bashlex does not speak: their code is never seen through.
_FOREIGN = frozenset({"fish", "csh", "tcsh"})
# Options that leave the code meaning what bashlex reads. Not among them: -k (NAME=value
# words after the command go into its environment), -H and -i (history expansion rewrites
# lines), -P (cd follows links), and every shopt name (-O/+O: interactive_comments,
# dotglob, extglob change what a line means or matches).
_FLAGS = frozenset("abefhmnptuvxBCETr")
_SET_NAMES = frozenset({"errexit", "nounset", "pipefail", "xtrace", "verbose", "noclobber",
                        "allexport", "noexec", "nolog", "notify", "hashall", "monitor",
                        "errtrace", "functrace", "ignoreeof", "emacs", "vi"})
_LONG_FLAGS = frozenset({"noprofile", "norc", "posix", "restricted", "verbose", "version",
                         "help", "debugger", "noediting", "dump-strings", "dump-po-strings",
                         "protected", "wordexp"})
# bash takes its long options after one dash too (`-norc`, `-rcfile FILE`), not as letters
_LONG_NAMES = _LONG_FLAGS | {"login", "rcfile", "init-file", "debug", "pretty-print"}
# POSIX shells that are not bash: `$'…'` and `$"…"` quote in bash only, so bashlex would
# read a different command from what dash runs (`sh -c "echo $'\'<newline>touch x…"`)
_BASH_QUOTES = ("$'", '$"')


@dataclass(slots=True)
class _ShellOptions:
    command: bool = False   # -c: the first operand is code
    stdin: bool = False     # -s: read commands from standard input
    rcfile: bool = False    # --rcfile / --init-file: runs a startup file the command names
    operands: int = 0       # index of the first operand


def shell_unwrap(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap:
    """What a shell runs: its -c string, a script, or the here-document it reads."""
    name = words[0].text
    if name in _FOREIGN:
        return Unwrap(name, False, f"`{name}` is not a POSIX shell",
                      opaque=f"`{name}` code is not analysed")
    options = _options(words)
    if options is None:
        why = f"`{name}` options are not understood"
        return Unwrap(name, False, why, opaque=why, runs_suffix=True)
    # Login and interactive shells (`bash -lc`, the form Codex and Claude Code send) and
    # zsh read the person's own startup files, outside the workspace; only a startup file
    # named in the command could be the agent's.
    transparent = not options.rcfile
    operands = words[options.operands:]
    if options.command:
        label, why = f"{name} -c", f"`{name} -c` runs its argument as shell code"
        if not operands or not operands[0].known:
            return Unwrap(label, False, why, opaque=f"`{label}` runs code only known at run time")
        return shell_code(name, label, transparent, why, operands[0].text)
    if operands and not options.stdin:
        script = operands[0].raw
        return Unwrap(f"{name} {script}", False, f"`{name} {script}` runs a script")
    if stdin_kind in ("heredoc", "herestring") and stdin_text is not None:
        why = f"`{name}` runs the commands written to its input"
        return shell_code(name, f"{name} <<", transparent, why, stdin_text)
    why = f"`{name}` runs commands read from its input"
    if stdin_kind == "file":
        return Unwrap(f"{name} <", False, why)
    return Unwrap(name, False, why, opaque=why)


def shell_code(name: str, label: str, transparent: bool, why: str, code: str) -> Unwrap:
    """What shell `name` runs when its code is `code`: seen through, unless it is not bash
    and the code quotes as only bash does."""
    if name.rpartition("/")[2] not in ("bash", "rbash") and any(q in code for q in _BASH_QUOTES):
        return Unwrap(label, False, why, opaque=f"`{name}` reads `$'…'` and `$\"…\"` as bash "
                                                "does not, so its code is not what is analysed")
    return Unwrap(label, transparent, why, code=code)


def _options(words: tuple[Word, ...]) -> _ShellOptions | None:
    """Walk bash-style options: letter clusters after - or +, -o/-O taking a word."""
    found = _ShellOptions()
    index = 1
    while index < len(words):
        word = words[index]
        text = word.text
        if text in ("-", "--"):
            index += 1
            break
        if text[:1] not in ("-", "+") or len(text) < 2:
            break
        if not word.known:
            return None
        if text.startswith("--") or text[0] == "-" and text[1:] in _LONG_NAMES:
            name = text.lstrip("-")
            if name in ("login", "rcfile", "init-file"):
                found.rcfile = found.rcfile or name != "login"
                index += 1 if name == "login" else 2
                continue
            if name not in _LONG_FLAGS:
                return None
            index += 1
            continue
        skip = _letters(text, found)
        if skip is None:
            return None
        named = [word.text for word in words[index + 1:index + 1 + skip]]
        if len(named) < skip or not set(named) <= _SET_NAMES or "O" in text:
            return None  # a shopt name, or a set name that changes what the code means
        index += 1 + skip
    found.operands = index
    return found


def _letters(text: str, found: _ShellOptions) -> int | None:
    """Read one cluster such as `-lc` or `+o`; return how many following words it takes."""
    skip = 0
    for letter in text[1:]:
        if letter == "c" and text[0] == "-":
            found.command = True
        elif letter == "s":
            found.stdin = True
        elif letter == "l":
            pass  # login: the person's own startup files
        elif letter in "oO":
            skip += 1
        elif letter not in _FLAGS:
            return None
    return skip
