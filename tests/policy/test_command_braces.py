"""Brace expansion agrees with bash: words made of braces, commas, dots and quotes are expanded
by `expand_braces()` and by a real bash (a `for` loop over the word), and must give the same
words.

bash only prints the words; nothing else is run.
"""

from __future__ import annotations

import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from intentd.daemon.policy.command.braces import TooManyWords, expand_braces
from intentd.daemon.policy.command.words import unquote

PIECES = ["{", "}", ",", "a", "b", ".", "..", "1", "3", "x{", "}y", "''", "'", '"', "\\", "\\{",
          "{a,b}", "{1..3}", "{a..c}", ".env", "/", "../", "{,}", "{..", "..}"]
words = st.lists(st.sampled_from(PIECES), min_size=1, max_size=10).map("".join)
SOME = settings(max_examples=300, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))  # a bash per example is slow under load


def bash_words(raw: str) -> list[str]:
    script = f"for word in {raw}; do printf '%s\\0' \"$word\"; done"
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", script],
                          capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
    return done.stdout.decode().split("\0")[:-1]


def ours(raw: str) -> list[str]:
    pieces = expand_braces(raw)
    texts = [unquote(piece) for piece in (pieces if pieces is not None else [raw])]
    return [text for text in texts if text is not None]


@SOME
@given(words)
def test_expansion_matches_bash(raw: str) -> None:
    if unquote(raw) is None or raw.endswith("\\"):
        return  # an unbalanced quote or a trailing backslash is a syntax error, not a word
    try:
        found = ours(raw)
    except TooManyWords:
        return  # the analysis refuses the word (test_command_corpus_classes)
    assert found == bash_words(raw), raw


def test_examples_from_the_issue() -> None:
    for raw in ("{.env,/dev/null}", ".{env,}", "{.env,src/a.py}", "{secrets,src}/key.txt",
                "{../.env{,}}", "{..{a,b}}", "{a{b,c}..}", "x{a..b{,}}y", "{..a}",
                "{..}\\{a,b}", "{a}x,y}", "{a},{b}", "{.e}nv,x}"):
        assert ours(raw) == bash_words(raw)


def test_a_word_that_starts_with_an_empty_pair_is_not_expanded() -> None:
    """bash leaves `{}` at the start of a word alone (find's `{}`), but not after a letter."""
    for raw in ("{},}", "{},.env}", "{}{a,b}", "x{},a}y", "{{},a}", "{a,{}}"):
        assert ours(raw) == bash_words(raw), raw
