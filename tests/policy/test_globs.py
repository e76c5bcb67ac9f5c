"""The compiled pattern list decides exactly as pathspec's GitIgnoreSpec, on random lines and paths."""

from __future__ import annotations

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from intentd.daemon.policy.globs import PatternList, fold

PARTS = ["a", "b", "src", "x.py", "b.py", "ab", ".git", "a.b", "x.tar.gz", "gz", "A", "é", "a-b",
         "c#d", "x y", "a~", "a+b.py"]
GLOB_PARTS = [*PARTS, "*", "**", "*.py", "*.gz", "?", "a?", "[ab]", "a*", "*b", "\\*", "[!a]*",
              "*.tar.gz", "x.*", " ", "b "]

segments = st.lists(st.sampled_from(GLOB_PARTS), min_size=1, max_size=4)
lines = st.builds(
    lambda negate, lead, parts, trail: ("!" if negate else "") + lead + "/".join(parts)
    + ("/" if trail else ""),
    st.booleans(), st.sampled_from(["", "/", "**/", "#"]), segments, st.booleans())
paths = st.builds(lambda parts, trail: "/".join(parts) + ("/" if trail else ""),
                  st.lists(st.sampled_from(PARTS), min_size=1, max_size=5), st.booleans())


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line], backend="simple")
    except ValueError:
        return False
    return True


@settings(max_examples=800, deadline=None)
@given(st.lists(lines.filter(_valid), max_size=12), st.lists(paths, min_size=1, max_size=8))
def test_agrees_with_pathspec(pattern_lines: list[str], checked: list[str]) -> None:
    expected = pathspec.GitIgnoreSpec.from_lines(pattern_lines, backend="simple")
    compiled = PatternList(pattern_lines)
    for path in checked:
        assert compiled.matches(path) == expected.match_file(path), (pattern_lines, path)


def test_exclusions_and_folders_as_git_sees_them() -> None:
    scope = PatternList(["src/**", "!src/secret.py", "docs/", "*.md", "!README.md"])
    assert scope.matches("src/app/main.py")
    assert not scope.matches("src/secret.py")
    assert scope.matches("docs/a/b.txt") and not scope.matches("notdocs/a.txt")
    assert scope.matches("guide/intro.md") and not scope.matches("README.md")


def test_ten_thousand_patterns_still_decide_each_path() -> None:
    many = [f"src/mod{i}/**" for i in range(10_000)] + ["!src/mod42/keep.py", "**/*.lock"]
    scope = PatternList(many)
    assert scope.matches("src/mod9999/a/b.py") and scope.matches("src/mod0/x")
    assert not scope.matches("src/mod42/keep.py") and not scope.matches("src/mod10000/x")
    assert scope.matches("deep/in/tree/poetry.lock")


@settings(max_examples=400, deadline=None)
@given(st.lists(lines.filter(_valid), max_size=8), st.lists(paths, min_size=1, max_size=6))
def test_caseless_lists_treat_every_spelling_of_a_path_alike(pattern_lines: list[str],
                                                            checked: list[str]) -> None:
    caseless = PatternList(pattern_lines, fold_case=True)
    expected = pathspec.GitIgnoreSpec.from_lines([fold(line) for line in pattern_lines],
                                                 backend="simple")
    for path in checked:
        answer = caseless.matches(path)
        assert answer == expected.match_file(fold(path)), (pattern_lines, path)
        assert caseless.matches(path.upper()) == caseless.matches(path.swapcase()) == answer
