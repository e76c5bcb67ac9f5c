"""Argument checks for inspection programs: environment printers, jq, converters with an output."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from intentd.daemon.policy.command.options import matches_long, operands, short_letters
from intentd.daemon.policy.command.words import is_plain_variable

# jq builtins and keywords that read what the filter does not show: the environment
# (`env`, `$ENV`) and modules from the library path (`import`, `include`). `.env` is a
# field, not the builtin. jq 1.6 reads `$` and the name as two tokens, so blanks and
# comments may stand between them (`$ ENV`, `$#…\nENV`).
_JQ_HIDDEN = re.compile(
    r"(?<![\w.$])(?:env|import|include)\b|\$(?:\s|#[^\n]*(?:\n|$))*(?:ENV\b|__prog)")
_JQ_TAKES_TWO = ("arg", "argjson", "slurpfile", "rawfile")

Check = Callable[[Sequence[str]], "str | None"]


def reveals(name: str, args: Sequence[str]) -> str | None:
    """Why `name ARGS` may print secrets or load code no rule can see, whatever the allow
    rules say (`jq *` is meant for JSON, not for `jq -n env`), or None."""
    if name in ("env", "printenv", "jq"):
        return _REVEALS[name](args)
    if name == "set" and not args:
        return "`set` prints every shell variable, which may hold secrets"
    if name in _DECLARERS:
        names = [word.split("=", 1)[0] for word in operands(args)]
        # -p prints; zsh's -m takes patterns and prints what they match; and zsh prints
        # a set variable named with no value and no attribute (`typeset GITHUB_TOKEN`).
        printing = any(set(short_letters(word)) & set("pm") for word in args) or (
            name in ("declare", "typeset", "local")
            and any("=" not in word for word in operands(args))
            and not any(word.startswith(("-", "+")) for word in args))
        if not names or (printing and not all(map(is_plain_variable, names))):
            return f"`{name}` prints variables, which may hold secrets"
    return None


_DECLARERS = frozenset({"export", "declare", "typeset", "readonly", "local"})


def check_env(args: Sequence[str]) -> str | None:
    """`env` with a command is a wrapper; reaching here, it has none and prints everything."""
    return "`env` without a command prints the whole environment, which may hold secrets"


def check_printenv(args: Sequence[str]) -> str | None:
    for word in args:
        if word in ("-0", "--null"):
            continue
        if word.startswith("-") or not is_plain_variable(word):
            return f"`printenv {word}` may print a secret"
    return None if operands(args) else "`printenv` prints the whole environment"


def check_jq(args: Sequence[str]) -> str | None:
    """No library path (`-L`), no filter file (`-f`), and a filter that reads no
    environment and imports no module."""
    index, filter_seen = 0, False
    while index < len(args):
        word = args[index]
        index += 1
        if word in ("--args", "--jsonargs", "--"):
            continue  # what follows the filter is values; the filter itself may come next
        if word.startswith("--"):
            if matches_long(word, ("library-path", "from-file")):
                return f"`jq {word}` loads jq code that is not checked"
            if matches_long(word, _JQ_TAKES_TWO) and "=" not in word:
                index += 2
            elif matches_long(word, ("indent",)) and "=" not in word:
                index += 1
        elif word.startswith("-") and len(word) > 1:
            if set(short_letters(word)) & set("Lf"):
                return f"`jq {word}` loads jq code that is not checked"
        elif not filter_seen:
            filter_seen = True
            if _JQ_HIDDEN.search(word):
                return "the jq filter reads the environment or imports a module"
    return None


_XXD_TAKES = frozenset({"-c", "-g", "-l", "-o", "-s", "-n", "-R"})  # -C is a flag


def xxd_operands(args: Sequence[str]) -> list[str]:
    """xxd's INPUT and OUTPUT: its options end at the first operand, so a later `-word` is
    the output file (`xxd -r -p hex.txt -evil` writes `-evil`)."""
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-":
        if args[index] == "--":
            index += 1
            break
        index += 2 if args[index] in _XXD_TAKES else 1
    return list(args[index:])


def check_xxd(args: Sequence[str]) -> str | None:
    if len(xxd_operands(args)) > 1:
        return "`xxd INPUT OUTPUT` writes its second file"
    return None


def refuse_output(takes: str) -> Check:
    """Converters that write a file only with -o / --output (base64 on macOS, iconv, shuf)."""
    def check(args: Sequence[str]) -> str | None:
        for word in args:
            if word == "--":
                return None
            if "o" in short_letters(word, takes) or matches_long(word, ("output",)):
                return f"`{word}` writes a file"
        return None
    return check



_REVEALS: dict[str, Check] = {"env": check_env, "printenv": check_printenv, "jq": check_jq}
