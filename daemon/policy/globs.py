"""Gitignore-style pattern lists compiled for lookup, so a match costs what the path needs to check.

Each line becomes pathspec's own regular expression (`GitIgnoreSpecPattern`), and the result is
decided exactly as `pathspec.GitIgnoreSpec.match_file` decides it with its "simple" backend: the
last pattern that matches the path as a file wins; if none does, the last one that matches it
through a folder. Only which patterns are *tried* changes: each is filed under what a path must
contain to match it (a literal path or folder prefix, a name, a file extension), and a path tries
only what it can reach.
Patterns with none of these (an unanchored glob such as `**/a*b`) are tried on every path.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern
from pathspec.util import normalize_file

DIR_MARK = "ps_d"
FLOATING = "^(?:.+/)?"  # pathspec's prefix for a pattern that may start at any folder
NAME_ENDS = ("(?:(?P<ps_d>/)|$)", "(?P<ps_d>/)")
META = set(".^$*+?{}[]|()\\")
QUANTIFIERS = set("*+?{")


@dataclass
class _Pattern:
    include: bool
    source: str
    _compiled: re.Pattern[str] | None = field(default=None, repr=False)

    def match(self, path: str) -> tuple[bool, bool] | None:
        """(include, through_folder) when the pattern matches, as pathspec decides both."""
        if self._compiled is None:  # compiled on first use: 10,000 lines load fast
            self._compiled = re.compile(self.source)
        found = self._compiled.search(path)
        if found is None:
            return None
        return self.include, bool(found.groupdict().get(DIR_MARK))


def fold(text: str) -> str:
    """The canonical caseless form (Unicode's NFD, casefold, then NFC): names a case-insensitive
    file system (macOS, Windows, an ext4 `casefold` folder) treats as one have the same form."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


class PatternList:
    """Gitignore-style lines; `matches(path)` agrees with pathspec's GitIgnoreSpec. With
    `fold_case`, lines and paths are compared in their caseless form."""

    def __init__(self, lines: Iterable[str], fold_case: bool = False) -> None:
        self.fold_case = fold_case
        self.patterns: list[_Pattern] = []
        self._by_path: dict[str, list[int]] = {}     # `a/b.py`, `/a/b/`: that path or below it
        self._by_folder: dict[str, list[int]] = {}   # literal folder prefix -> pattern indexes
        self._by_name: dict[str, list[int]] = {}     # `name`, `name/`, `**/name` anywhere
        self._by_extension: dict[str, list[int]] = {}  # `*.py`, `**/*.tar.gz` by last suffix
        self._everywhere: list[int] = []
        for line in lines:
            source, include = GitIgnoreSpecPattern.pattern_to_regex(fold(line) if fold_case else line)
            if source is None or include is None:
                continue  # a blank line or a comment
            self._file(len(self.patterns), source)
            self.patterns.append(_Pattern(include, source))

    def __len__(self) -> int:
        return len(self.patterns)

    def matches(self, path: str) -> bool:
        file = normalize_file(fold(path) if self.fold_case else path)
        through_folder: bool | None = None
        for index in sorted(self._candidates(file), reverse=True):
            found = self.patterns[index].match(file)
            if found is None:
                continue
            include, by_folder = found
            if not by_folder:
                return include  # the last file match decides
            if through_folder is None:
                through_folder = include  # the last folder match decides if no file match does
        return bool(through_folder)

    def _file(self, index: int, source: str) -> None:
        """File the pattern under what a path must contain to match it."""
        if source.startswith(FLOATING):
            key = _floating_key(source[len(FLOATING):])
            if key is not None:
                table = self._by_extension if key[0] == "extension" else self._by_name
                table.setdefault(key[1], []).append(index)
                return
        elif source.startswith("^"):
            exact = _literal_name(source[1:])
            if exact is not None:
                self._by_path.setdefault(exact, []).append(index)
                return
            prefix, _ = _scan_literal(source[1:])
            folder = prefix[:prefix.rfind("/")] if "/" in prefix else ""
            self._by_folder.setdefault(folder, []).append(index)
            return
        self._everywhere.append(index)

    def _candidates(self, file: str) -> list[int]:
        found = list(self._everywhere)
        found += self._by_folder.get("", ())
        parts = file.split("/")
        start = 0
        for part in parts:
            start += len(part)
            if start < len(file):  # a folder above the path
                found += self._by_folder.get(file[:start], ())
            found += self._by_path.get(file[:start], ())
            start += 1
        for part in set(parts):
            found += self._by_name.get(part, ())
            dot = part.rfind(".")
            if dot >= 0:
                found += self._by_extension.get(part[dot:], ())
        return found


def _literal_name(rest: str) -> str | None:
    """`a/b` for a regex that matches exactly the path `a/b` (as a file or a folder), else None."""
    for end in NAME_ENDS:
        if rest.endswith(end):
            body = rest[: len(rest) - len(end)]
            name, stop = _scan_literal(body)
            return name if stop == len(body) and name else None
    return None


def _floating_key(rest: str) -> tuple[str, str] | None:
    """("name", n) for `n`, `n/`, `**/n`; ("extension", ".e") for `*.e`, `*x.tar.e`; else None."""
    for end in NAME_ENDS:
        if not rest.endswith(end):
            continue
        body = rest[: len(rest) - len(end)]
        name = _literal_name(rest)
        if name is not None and "/" not in name:
            return "name", name
        if body.startswith("[^/]*"):
            tail, stop = _scan_literal(body[len("[^/]*"):])
            if stop == len(body) - len("[^/]*") and "." in tail and "/" not in tail:
                return "extension", tail[tail.rfind("."):]
        return None
    return None


def _scan_literal(source: str) -> tuple[str, int]:
    """The literal text every match of `source` starts with (escapes undone), and where the
    literal part ends (len(source) when the whole of it is literal)."""
    out: list[str] = []
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source) and not source[i + 1].isalnum():
            out.append(source[i + 1])
            i += 2
            continue
        if char in META:
            if char in QUANTIFIERS and out:
                out.pop()  # `x*`: the last character may be absent
            return "".join(out), -1
        out.append(char)
        i += 1
    return "".join(out), i
