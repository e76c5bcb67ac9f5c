"""The preview decides every file as the scope stage decides one path (PatternList)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from intentd.daemon.intents_edit import preview as preview_module
from intentd.daemon.intents_edit.preview import PatternSet, ScopePreviewer, paths_of
from intentd.daemon.policy.globs import PatternList
from intentd.daemon.policy.ignore import IgnoreRules

NAMES = ["src", "a", "b", "lib", "x.py", "y.md", "secret", "docs", "README.md", "t.txt", "Src"]
LINES = ["src/**", "!src/secret/**", "*.md", "a/", "/b", "**/x.py", "!**/y.md", "lib/*",
         "docs/**/t.txt", "secret", "!a/b/**", "a/**/secret/", "*", "!*.txt", "src", "s*/",
         "[ab]/x.py", "!/src/a", "src/a", "**/lib/**", "SRC/**"]


@pytest.mark.parametrize("fold_case", [False, True])
def test_each_file_is_decided_as_the_scope_stage_decides_it(fold_case: bool) -> None:
    rng = random.Random(7)
    files = tuple(sorted({"/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))
                          for _ in range(2000)}))
    for _trial in range(200):
        lines = rng.sample(LINES, rng.randint(1, 6))
        single = PatternList(lines, fold_case=fold_case)
        want = [f for f in files if single.matches(f)]
        assert paths_of(files, PatternSet(lines, fold_case).owned(files), len(files)) == want, lines


def test_a_preview_says_what_a_change_adds_and_removes(tmp_path: Path) -> None:
    for name in ("src/a.py", "src/secret/k.py", "docs/x.md", ".git/HEAD", ".orchestration/p.yaml",
                 "build/out.bin"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    preview = ScopePreviewer(str(tmp_path)).preview(
        ["src/**", "!src/secret/**", "**"], ["src/**"], IgnoreRules(patterns=("build/",)),
        False, limit=1)
    assert preview["total_files"] == 3  # not .git/, .orchestration/, or what is ignored
    assert (preview["count"], preview["files"]) == (3, ["docs/x.md"])
    assert (preview["added_count"], preview["added"]) == (1, ["docs/x.md"])
    assert preview["removed_count"] == 0


def test_keystrokes_reuse_the_listing_and_an_old_one_is_taken_again_in_the_background(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    previewer, none = ScopePreviewer(str(tmp_path)), IgnoreRules()

    def count(max_age: float | None = None) -> int:
        return int(previewer.preview(["**"], None, none, False, 10, max_age)["total_files"])

    (tmp_path / "a.py").write_text("a")
    assert count() == 1
    (tmp_path / "b.py").write_text("b")
    assert count() == 1, "a keystroke does not wait for the disk"
    assert count(max_age=0) == 2, "an editor that opens lists the files afresh"
    (tmp_path / "c.py").write_text("c")
    monkeypatch.setattr(preview_module, "LISTING_TTL", 0.0)
    deadline = time.monotonic() + 10
    while count() != 3:  # the old listing answers while the new one is taken
        assert time.monotonic() < deadline, "the listing was never taken again"
        time.sleep(0.01)
