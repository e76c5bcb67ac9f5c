"""See through a shell started as a command: `bash -c CODE`, `sh script.sh`, `bash <<EOF`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from intentd.daemon.policy.command.syntax import parse_units
from intentd.daemon.policy.command.unwrap import Unwrap
from intentd.daemon.policy.command.words import Word

# Shells whose language bashlex does not speak: their code is never seen through. The ksh
# family is among them: mksh evaluates `[ 'a[$(cmd)]' -eq 0 ]` as arithmetic, running cmd.
_FOREIGN = frozenset({"fish", "csh", "tcsh", "ksh", "mksh", "yash", "posh"})
# The option letters every other shell reads as bash does; -c, -s and -l are read apart.
_POSIX_FLAGS = frozenset("eux")
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
# zsh evaluates a subscript (`"$PWD[i]"`, `${x[…]}`) as arithmetic, and the arithmetic
# expands a variable whose value may hold `$(…)`; bashlex reads it as text
_ZSH_SUBSCRIPT = re.compile(r"\$\{?[#=~^+]*[A-Za-z_][A-Za-z0-9_]*\[")


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
        return Unwrap(name, False, f"`{name}` does not read code as bash does",
                      opaque=f"`{name}` code is not analysed")
    options = _options(words, bash=_base(name) in ("bash", "rbash"))
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
        if _units(stdin_text) > 1:  # a command of the first may read the next ones away
            return Unwrap(f"{name} <<", False, why, opaque=(
                f"`{name}` reads its script from its input a command at a time, and a command "
                "in it may read away what follows (`head -c 7` eats the next line's quote)"))
        return shell_code(name, f"{name} <<", transparent, why, stdin_text)
    why = f"`{name}` runs commands read from its input"
    if stdin_kind == "file":
        return Unwrap(f"{name} <", False, why)
    return Unwrap(name, False, why, opaque=why)


def shell_code(name: str, label: str, transparent: bool, why: str, code: str) -> Unwrap:
    """What shell `name` runs when its code is `code`: seen through, unless it is not bash
    and the code quotes as only bash does."""
    if _base(name) not in ("bash", "rbash") and any(q in code for q in _BASH_QUOTES):
        return Unwrap(label, False, why, opaque=f"`{name}` reads `$'…'` and `$\"…\"` as bash "
                                                "does not, so its code is not what is analysed")
    if _base(name) == "zsh" and _ZSH_SUBSCRIPT.search(code):
        return Unwrap(label, False, why, opaque="zsh evaluates a subscript as arithmetic, which "
                                                "may run code a variable holds")
    return Unwrap(label, transparent, why, code=code)


def _units(code: str) -> int:
    try:
        return parse_units(code)
    except Exception:  # noqa: BLE001 - the code's own analysis says why it cannot be parsed
        return 1


def _base(name: str) -> str:
    return name.rpartition("/")[2]


def _options(words: tuple[Word, ...], bash: bool) -> _ShellOptions | None:
    """Walk bash-style options: letter clusters after - or +, -o/-O taking a word."""
    flags = _FLAGS if bash else _POSIX_FLAGS
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
        if not bash and (text.startswith("--") or set(text) & set("oO")):
            return None  # long options and set names are bash's: another shell's differ
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
        skip = _letters(text, found, flags)
        if skip is None:
            return None
        named = [word.text for word in words[index + 1:index + 1 + skip]]
        if len(named) < skip or not set(named) <= _SET_NAMES or "O" in text:
            return None  # a shopt name, or a set name that changes what the code means
        index += 1 + skip
    found.operands = index
    return found


def _letters(text: str, found: _ShellOptions, flags: frozenset[str]) -> int | None:
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
        elif letter not in flags:
            return None
    return skip
