"""owned_scope globs widened to the folders the kernel can grant."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.sandbox.scope_dirs import covered_prefixes


@pytest.mark.parametrize(("scope", "folders"), [
    (["src/**"], ["src"]),
    (["src/**/*.py"], ["src"]),
    (["src/**", "tests/unit/*.py"], ["src", "tests/unit"]),
    (["src/"], [""]),                               # gitignore: any folder named src, at any depth
    (["src/**", "src/lib/**"], ["src"]),           # a folder beneath a granted one adds nothing
    (["/docs/*.md"], ["docs"]),                     # anchored with a leading slash
    (["*.py"], [""]),                               # no slash: gitignore matches it at any depth
    (["build/"], [""]),                             # same, a folder at any depth
    (["**"], [""]),
    (["**/*.py", "src/**"], [""]),
    (["!src/secret/**", "# comment", ""], []),      # exclusions only narrow: nothing granted
    (["src/../etc/**"], []),                        # never a way out of the workspace
    (["pkg/mod.py"], ["pkg"]),                      # a file: the folder it sits in
    ([], []),
])
def test_globs_become_folder_prefixes(scope: list[str], folders: list[str], tmp_path: Path) -> None:
    assert covered_prefixes(scope, str(tmp_path)) == folders


def test_a_literal_path_that_is_a_folder_is_granted_itself(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    assert covered_prefixes(["pkg/sub"], str(tmp_path)) == ["pkg/sub"]
