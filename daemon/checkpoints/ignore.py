"""Which workspace paths checkpoints leave alone: .gitignore files, .git/info/exclude, the policy's rules."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import pathspec

from intentd.daemon.policy.globs import fold
from intentd.daemon.policy.persons import persons_path
from intentd.daemon.utils.reading import read_regular

from .paths import in_git_dir, under

# pathspec writes "match at any depth" as this prefix; a basename pattern is then tested against
# the name alone, which saves a backtracking regex per pattern per path.
# of a rule file read; past it the rest is not read (fewer rules: checkpoints see more, never less)
MAX_RULES_BYTES = 16 << 20
_ANY_DEPTH = "^(?:.+/)?"
_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")


@dataclass(frozen=True)
class _Group:
    """A run of consecutive patterns with the same sign, joined into one regex per kind:
    names (basename patterns), paths (tested with a trailing '/' on folders) and inside
    ("dir/**" patterns, tested without it: they match what is in dir, never dir itself)."""

    include: bool
    names: re.Pattern[str] | None
    paths: re.Pattern[str] | None
    inside: re.Pattern[str] | None


@dataclass(frozen=True)
class Matcher:
    """One ignore file, compiled."""

    groups: tuple[_Group, ...]

    def check(self, rel: str, name: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a '!' pattern, None = no pattern matched.
        rel is relative to the ignore file's folder; name is the last part."""
        key, name_key = (rel + "/", name + "/") if is_dir else (rel, name)
        for group in reversed(self.groups):  # the last matching pattern wins
            if ((group.names is not None and group.names.match(name_key))
                    or (group.paths is not None and group.paths.match(key))
                    or (group.inside is not None and group.inside.match(rel))):
                return group.include
        return None


def _join(sources: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{s})" for s in sources)) if sources else None


def compile_lines(lines: Iterable[str]) -> Matcher | None:
    """Compile gitignore lines (pathspec does the glob translation), or None if no patterns."""
    runs: list[tuple[bool, list[str], list[str], list[str]]] = []
    # backend="simple": only the patterns are used here; with google-re2 installed pathspec
    # would also build an RE2 set, which fails on a few thousand lines.
    for pattern in pathspec.GitIgnoreSpec.from_lines(lines, backend="simple").patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue
        source = _NAMED_GROUP.sub("(?:", regex.pattern)
        text = str(getattr(pattern, "pattern", "")).strip().removeprefix("!")
        if not runs or runs[-1][0] != pattern.include:
            runs.append((bool(pattern.include), [], [], []))
        if text.endswith("/**"):
            runs[-1][3].append(source)
        elif source.startswith(_ANY_DEPTH) and "/" not in text.rstrip("/").removeprefix("**/"):
            runs[-1][1].append("^" + source[len(_ANY_DEPTH):])
        else:
            runs[-1][2].append(source)
    groups = tuple(_Group(include, _join(names), _join(paths), _join(inside))
                   for include, names, paths, inside in runs)
    return Matcher(groups) if groups else None


def _read_matcher(path: str) -> Matcher | None:
    """The rules of a .gitignore (or git's exclude file); None when there are none to read. A
    command may leave a FIFO in its place: it is never waited on (it has no rules)."""
    try:
        data = read_regular(path, MAX_RULES_BYTES)
    except OSError:
        return None
    return compile_lines(data.decode("utf-8", "surrogateescape").splitlines())


# The .gitignore files in force for one directory: (base folder 'a/b/' or '', matcher), root first.
Frame = tuple[tuple[str, Matcher], ...]


class PolicyRules(Protocol):
    """The workspace's own ignore rules (`.orchestration/ignore`): paths hidden from tools."""

    @property
    def patterns(self) -> Sequence[str]: ...

    def ignores(self, relative_path: str) -> bool: ...


def policy_key(rules: PolicyRules) -> str:
    """A fingerprint of the policy's patterns; "" when there are none."""
    text = "\n".join(rules.patterns)
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest() if text else ""


class CheckpointIgnore:
    """Answers "is this path ignored?" the way git would, plus `.git` folders, skipped folders and
    the caller's extra rule, which wins over git's `!` re-includes. Global git excludes
    (core.excludesFile) are not read.

    extra_key returns a token that changes whenever the extra rule may answer differently.
    """

    def __init__(
        self,
        root: str,
        extra: Callable[[str], bool] | None = None,
        skip_dirs: Iterable[str] = (),
        extra_key: Callable[[], str] | None = None,
    ) -> None:
        self._root = root
        self._extra = extra
        self._extra_key = extra_key
        self._skip = tuple(skip_dirs)
        self._cache: dict[str, tuple[tuple[int, int, int], Matcher | None]] = {}
        self._exclude_key: tuple[int, int, int] | None = None
        self._exclude: Matcher | None = None

    def matcher_for(self, rel_dir: str) -> Matcher | None:
        """The .gitignore of folder rel_dir ('' or 'a/b/'), compiled once and re-read when it changes."""
        path = os.path.join(self._root, rel_dir, ".gitignore")
        try:
            st = os.stat(path)
        except OSError:
            self._cache.pop(rel_dir, None)
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        hit = self._cache.get(rel_dir)
        if hit is not None and hit[0] == key:
            return hit[1]
        matcher = _read_matcher(path)
        self._cache[rel_dir] = (key, matcher)
        return matcher

    def _exclude_matcher(self) -> Matcher | None:
        path = os.path.join(self._root, ".git", "info", "exclude")
        try:
            st = os.stat(path)
        except OSError:
            self._exclude_key, self._exclude = None, None
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        if key != self._exclude_key:
            self._exclude_key, self._exclude = key, _read_matcher(path)
        return self._exclude

    def exclude_key(self) -> str:
        """A token that changes when the repository's .git/info/exclude changes."""
        self._exclude_matcher()
        return repr(self._exclude_key)

    def extra_key(self) -> str:
        """A token that changes when the caller's extra rule changes ("" without one)."""
        return self._extra_key() if self._extra_key is not None else ""

    def root_frame(self) -> Frame:
        """The frame at the workspace root; also re-reads .git/info/exclude if it changed."""
        self._exclude_matcher()
        matcher = self.matcher_for("")
        return (("", matcher),) if matcher is not None else ()

    def child_frame(self, frame: Frame, rel_dir: str, has_gitignore: bool | None = None) -> Frame:
        """The frame for sub-folder rel_dir ('a/b/'); has_gitignore=False skips the stat."""
        if has_gitignore is False:
            return frame
        matcher = self.matcher_for(rel_dir)
        return frame + ((rel_dir, matcher),) if matcher is not None else frame

    def skipped_dir(self, rel: str) -> bool:
        """Folders never looked into: `.git` and the store itself when it lives in the workspace."""
        return in_git_dir(rel) or any(under(rel, skip) for skip in self._skip)

    def ignored_in(self, frame: Frame, rel: str, is_dir: bool) -> bool:
        """Whether rel (its parent folders already known not ignored) is ignored, given its frame.
        Ignored when git says so or the extra rule does: a `!` in a .gitignore cannot re-include
        what the policy hides from tools. The person's own files are never ignored, and nor is
        a .gitignore: one that ignored itself would hide its own change, and all it hid, from
        every checkpoint and so from the scope audit."""
        if persons_path(rel):
            return False
        name = rel[rel.rfind("/") + 1:]
        if not is_dir and is_gitignore(name):
            return False
        for base, matcher in reversed(frame):  # deeper .gitignore files take precedence
            verdict = matcher.check(rel[len(base):], name, is_dir)
            if verdict is not None:
                break
        else:
            verdict = self._exclude is not None and self._exclude.check(rel, name, is_dir)
        if verdict:
            return True
        return self._extra is not None and bool(self._extra(rel))

    def is_ignored(self, rel: str) -> bool:
        """Whether file rel is ignored: by itself or because a parent folder is."""
        return not self.kept([rel])

    def kept(self, paths: Iterable[str], frames: dict[str, Frame | None] | None = None) -> list[str]:
        """The files among paths that are not ignored; each folder's frame is worked out once
        (in `frames`, when the caller keeps them across calls)."""
        if frames is None:
            frames = {"": self.root_frame()}
        found = []
        for rel in paths:
            if self.skipped_dir(rel):
                continue
            frame = self._frame(rel.rpartition("/")[0], frames)
            if frame is not None and not self.ignored_in(frame, rel, is_dir=False):
                found.append(rel)
        return found

    def frame_for(self, rel_dir: str) -> Frame | None:
        """The frame inside folder rel_dir ('a/b'), or None if the folder itself is ignored."""
        return self._frame(rel_dir, {"": self.root_frame()})

    def frame_in(self, rel_dir: str, frames: dict[str, Frame | None]) -> Frame | None:
        """frame_for, with the frames worked out so far kept in `frames` (from root_frame())."""
        return self._frame(rel_dir, frames)

    @property
    def skipped_folders(self) -> tuple[str, ...]:
        """The folders besides `.git` that are never looked into (the store, when inside)."""
        return self._skip

    def _frame(self, rel_dir: str, frames: dict[str, Frame | None]) -> Frame | None:
        """frame_for with the frames already known (parents first, so each is built once)."""
        if rel_dir in frames:
            return frames[rel_dir]
        parent = self._frame(rel_dir.rpartition("/")[0], frames)
        if parent is None or self.skipped_dir(rel_dir) or self.ignored_in(parent, rel_dir, is_dir=True):
            frame = None
        else:
            frame = self.child_frame(parent, rel_dir + "/")
        frames[rel_dir] = frame
        return frame


def is_gitignore(rel: str) -> bool:
    """Whether rel is a .gitignore; caseless, as a case-insensitive file system reads it. (Every
    name that folds to it has its ten characters: the length spares a full scan the fold.)"""
    name = rel[rel.rfind("/") + 1:]
    return len(name) == 10 and fold(name) == ".gitignore"


def rules_digest(gitignores: Iterable[tuple[str, int, int]], exclude_key: str, extra_key: str) -> str:
    """A fingerprint of every ignore file seen by a full scan and of the extra rule; it changes
    when any rule may have."""
    digest = hashlib.sha1(exclude_key.encode())
    if extra_key:  # without one, the digest stays what stores made before extra rules counted
        digest.update(f"extra\0{extra_key}\n".encode("utf-8", "surrogateescape"))
    for path, mtime_ns, size in sorted(gitignores):
        digest.update(f"{path}\0{mtime_ns}\0{size}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()
