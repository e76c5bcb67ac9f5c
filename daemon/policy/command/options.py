"""Reading command-line options the way getopt does: short clusters and abbreviated long names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def short_letters(word: str, takes_argument: str = "") -> str:
    """The option letters in a short cluster such as `-nE` ("nE").

    A letter in `takes_argument` consumes the rest of the cluster (`-t,` `-k2`), so the
    letters after it are not options. Not a short cluster → "".
    """
    if len(word) < 2 or word[0] != "-" or word[1] == "-":
        return ""
    letters = []
    for char in word[1:]:
        letters.append(char)
        if char in takes_argument:
            break
    return "".join(letters)


def long_name(word: str) -> str:
    """`--output=x` → "output"; not a long option → ""."""
    if not word.startswith("--") or word == "--":
        return ""
    return word[2:].split("=", 1)[0]


def matches_long(word: str, names: Iterable[str], exact: Iterable[str] = ()) -> str | None:
    """The option in `names` that `word` selects, counting unambiguous abbreviations.

    getopt_long and git accept any unambiguous prefix (`--out=f` is `--output=f`), so an
    abbreviation of a refused option is refused too; `exact` lists real options that are
    themselves prefixes of a refused one (git's `--text` and `--textconv`). One letter is
    an abbreviation too: `sort --o=f` is `sort --output=f`.
    """
    name = long_name(word)
    if not name or name in exact:
        return None
    for candidate in names:
        if candidate.startswith(name):
            return candidate
    return None


def operands(words: Sequence[str], takes_argument: Iterable[str] = ()) -> list[str]:
    """The non-option words; options in `takes_argument` (`-f`, `--file`) skip the next word."""
    skip = set(takes_argument)
    result: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            result.extend(words[index + 1:])
            break
        if word in skip:
            index += 1
        elif not word.startswith("-") or word == "-":
            result.append(word)
        index += 1
    return result
