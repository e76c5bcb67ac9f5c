"""What seeing through a wrapper yields, and the getopt-style option walk wrappers share."""

from __future__ import annotations

from dataclasses import dataclass

from intentd.daemon.policy.command.words import Word


@dataclass(frozen=True, slots=True)
class Unwrap:
    """What a wrapper runs.

    `inner` holds the argv of each command it runs, `code` shell code it runs (`bash -c`,
    `eval`), `env` the NAME=value it sets for them. `transparent` says the wrapper itself
    adds nothing that matters (timeout, nice), `why` describes it, `opaque` says why what
    it runs cannot be known. `open_args` marks commands that get more arguments at run
    time, placed at `replace` ("{}") or appended; `runs_suffix` marks options that were
    not understood; `writes` and `reads` list files the wrapper itself writes (`time -o
    FILE`) or reads (`xargs -a FILE`).
    """

    label: str
    transparent: bool
    why: str
    inner: tuple[tuple[Word, ...], ...] = ()
    code: str | None = None
    env: tuple[Word, ...] = ()
    opaque: str | None = None
    open_args: bool = False
    replace: str = ""
    runs_suffix: bool = False
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Options:
    """A wrapper's options: short letters with an argument (`takes`), with an optional
    attached one (`optional`), without one (`flags`), and long names with and without."""

    takes: str = ""
    optional: str = ""
    flags: str = ""
    long_takes: frozenset[str] = frozenset()
    long_flags: frozenset[str] = frozenset()


Seen = list[tuple[str, "str | None"]]


def parse_options(words: tuple[Word, ...], start: int,
                  options: Options) -> tuple[int, Seen] | None:
    """Index of the first operand after the options, and the options seen with their values.

    None when an option is not known or only known at run time: then where the command
    starts cannot be told, and the caller refuses to see through it.
    """
    seen: Seen = []
    index = start
    while index < len(words):
        word = words[index]
        text = word.text
        if text == "--":
            return index + 1, seen
        if not text.startswith("-") or text == "-":
            return index, seen
        if not word.known:
            return None
        step = _long(words, index, options, seen) if text.startswith("--") else _short(
            words, index, options, seen)
        if step is None:
            return None
        index += step
    return index, seen


def _long(words: tuple[Word, ...], index: int, options: Options, seen: Seen) -> int | None:
    name, equals, value = words[index].text[2:].partition("=")
    if name in options.long_flags:
        seen.append(("--" + name, value if equals else None))
        return 1
    if name not in options.long_takes:
        return None
    if equals:
        seen.append(("--" + name, value))
        return 1
    following = words[index + 1].text if index + 1 < len(words) else None
    seen.append(("--" + name, following))
    return 2


def _short(words: tuple[Word, ...], index: int, options: Options, seen: Seen) -> int | None:
    text = words[index].text
    for position in range(1, len(text)):
        letter = text[position]
        attached = text[position + 1:]
        if letter in options.takes:
            if attached:
                seen.append(("-" + letter, attached))
                return 1
            following = words[index + 1].text if index + 1 < len(words) else None
            seen.append(("-" + letter, following))
            return 2
        if letter in options.optional:
            seen.append(("-" + letter, attached or None))
            return 1
        if letter not in options.flags:
            return None
        seen.append(("-" + letter, None))
    return 1
