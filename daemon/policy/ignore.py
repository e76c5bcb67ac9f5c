"""Ignore rules: `.orchestration/ignore`, and `.clineignore` / `.rooignore` for users of those tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from intentd.daemon.policy.globs import PatternList

IGNORE_FILES = (Path(".orchestration") / "ignore", Path(".clineignore"), Path(".rooignore"))


@dataclass(frozen=True)
class IgnoreRules:
    sources: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    # On a case-insensitive file system `.ENV` is the file `.env`: compare caseless there.
    fold_case: bool = False
    matcher: PatternList = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "matcher", PatternList(self.patterns, self.fold_case))

    def ignores(self, relative_path: str) -> bool:
        """True when the workspace-relative path, or a folder above it, is ignored.

        Folder-only patterns (`secrets/`) are also matched against the path as a folder: a
        directory named by an agent must not slip through for lack of a trailing slash."""
        if not self.patterns or relative_path == ".":
            return False
        return self.matcher.matches(relative_path) or self.matcher.matches(relative_path + "/")


def load_ignore_rules(root: Path, fold_case: bool | None = None) -> IgnoreRules:
    """Read every ignore file present under `root`. Unreadable files raise OSError.
    `fold_case` None: probe whether `root` folds case."""
    if fold_case is None:
        from intentd.daemon.utils.paths import folds_case

        fold_case = folds_case(str(root))
    sources: list[str] = []
    patterns: list[str] = []
    for name in IGNORE_FILES:
        path = root / name
        if path.is_file():
            sources.append(str(name))
            patterns.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return IgnoreRules(tuple(sources), tuple(patterns), fold_case)
