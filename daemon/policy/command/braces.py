"""Brace expansion as bash does it (`{a,b}`, `{1..3}`, nested, with a prefix and suffix)."""

from __future__ import annotations

from collections.abc import Iterator

MAX_WORDS = 256  # words one brace expression may become before the analysis gives up
BLANKS = (" ", "\t", "\n")
BLANKS_AND_CLOSE = (*BLANKS, "}")
MAX_BRACES = 64  # unquoted `{` in one word: each may cost a scan of the word, so few are followed


class TooManyWords(ValueError):
    """The expansion would make more than MAX_WORDS words (`{1..100000}`), or the word has
    more than MAX_BRACES braces."""


def expand_braces(raw: str) -> list[str] | None:
    """The words bash makes of `raw` by brace expansion, quotes kept; None when it makes none.

    Quoted and escaped braces and commas are literal, `${…}` is a parameter, and a brace
    pair with neither a top-level comma nor a valid sequence (`{}`, `{x}`) is literal, as
    in bash. Raises TooManyWords past MAX_WORDS.
    """
    if len(_unquoted_opening_braces(raw)) > MAX_BRACES:
        raise TooManyWords(f"`{raw[:60]}` has more than {MAX_BRACES} braces to expand")
    words = _expand(raw)
    if words == [raw]:
        return None
    return [word for word in words if word]  # bash drops the empty words `{,}` makes


def _expand(raw: str) -> list[str]:
    found = _first_pair(raw)
    if found is None:
        return [raw]
    start, end, commas = found
    inner, rest = raw[start + 1:end], raw[end + 1:]
    # bash looks for a comma anywhere in the braces (nested or quoted ones too) to choose a
    # list over a sequence: `{../.env{,}}` is the one-item list `../.env{,}`.
    alternatives = (_split(inner, commas, start + 1) if _any_comma(inner)
                    else _sequence(inner))
    if alternatives is None:  # not a sequence after all: this pair stays as it is
        return [raw] if not rest else _joined([raw[:end + 1]], _expand(rest), raw)
    suffixes = _expand(rest)
    words: list[str] = []
    for alternative in alternatives:
        words.extend(_joined([raw[:start]], _joined(_expand(alternative), suffixes, raw), raw))
        _limit(words, raw)
    return words


def _joined(heads: list[str], tails: list[str], raw: str) -> list[str]:
    return _limit([head + tail for head in heads for tail in tails], raw)


def _limit(words: list[str], raw: str) -> list[str]:
    if len(words) > MAX_WORDS:
        raise TooManyWords(f"brace expansion of `{raw[:60]}` makes too many words")
    return words


def _first_pair(raw: str) -> tuple[int, int, list[int]] | None:
    """(start, end, top-level commas) of the leftmost brace pair bash takes for an
    expansion: closed, with a top-level comma or `..` (not right before the `}`)."""
    for start in _unquoted_opening_braces(raw):
        end, commas, dots = _closing(raw, start)
        if end >= 0:
            return start, end, commas
    return None


def _any_comma(inner: str) -> bool:
    index = 0
    while index < len(inner):
        if inner[index] == "\\":
            index += 2
            continue
        if inner[index] == ",":
            return True
        index += 1
    return False


def _unquoted(raw: str, start: int) -> Iterator[tuple[int, str]]:
    """The characters of `raw` from `start` that stand outside quotes and are not escaped, with
    their positions (the quote characters themselves are not given)."""
    quote = ""
    index = start
    while index < len(raw):
        char = raw[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        else:
            yield index, char
        index += 1


def _unquoted_opening_braces(raw: str) -> list[int]:
    """Where a brace expression may start. Like bash, not at `${`, and not at a `{` that
    starts the word (or follows a blank) and is followed by a blank or `}` (`{}` of find)."""
    return [index for index, char in _unquoted(raw, 0)
            if char == "{" and not (index and raw[index - 1] == "$")
            and not ((index == 0 or raw[index - 1] in BLANKS)
                     and raw[index + 1:index + 2] in BLANKS_AND_CLOSE)]


def _closing(raw: str, start: int) -> tuple[int, list[int], bool]:
    """The `}` that closes the brace at `start` for bash (-1 if none), its top-level commas,
    and whether it has a top-level `..` that is not right before a `}`."""
    depth, dots = 0, False
    commas: list[int] = []
    for index, char in _unquoted(raw, start + 1):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "}" and (commas or dots):  # bash reads past a `}` before either
            return index, commas, dots
        elif char == "," and depth == 0:
            commas.append(index)
        elif raw.startswith("..", index) and depth == 0 and raw[index + 2:index + 3] != "}":
            dots = True
    return -1, [], False


def _split(inner: str, commas: list[int], offset: int) -> list[str]:
    """`inner` cut at its top-level commas (positions in the whole word; `offset` is
    where `inner` starts)."""
    cuts = [-1, *(comma - offset for comma in commas), len(inner)]
    return [inner[a + 1:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def _sequence(inner: str) -> list[str] | None:
    """`1..5`, `a..e`, `01..10..2` as bash expands them; None when not a sequence."""
    parts = inner.split("..")
    if len(parts) not in (2, 3):
        return None
    step_text = parts[2] if len(parts) == 3 else "1"
    if not _is_int(step_text):
        return None
    step = abs(int(step_text)) or 1
    first, last = parts[0], parts[1]
    if _is_int(first) and _is_int(last):
        return _numbers(first, last, step)
    if len(first) == 1 == len(last) and first.isascii() and last.isascii() and (
            first.isalpha() and last.isalpha()):
        return [chr(code) for code in _steps(ord(first), ord(last), step)]
    return None


def _numbers(first: str, last: str, step: int) -> list[str]:
    padded = any(len(t.lstrip("-")) > 1 and t.lstrip("-").startswith("0") for t in (first, last))
    width = max(len(first), len(last)) if padded else 0
    return [str(number).zfill(width) if number >= 0 else "-" + str(-number).zfill(width - 1)
            for number in _steps(int(first), int(last), step)]


def _steps(first: int, last: int, step: int) -> range:
    if abs(last - first) // step + 1 > MAX_WORDS:
        raise TooManyWords(f"the sequence {first}..{last} makes too many words")
    return range(first, last + 1, step) if first <= last else range(first, last - 1, -step)


def _is_int(text: str) -> bool:
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isdigit() and digits.isascii()
