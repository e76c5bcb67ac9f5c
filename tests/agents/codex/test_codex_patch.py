"""Codex's apply_patch envelope read as Codex reads it: every file it touches, or a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.agents.hooks.codex_patch import (
    FileChange,
    PatchError,
    changes,
    parse,
    shell_patch,
)

# Codex's own parser test (codex-rs/apply-patch/src/parser.rs): all three kinds in one patch
MIXED = ("*** Begin Patch\n*** Add File: path/add.py\n+abc\n+def\n*** Delete File: path/delete.py\n"
         "*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n"
         "+    return 123\n*** End Patch")


def test_every_kind_of_hunk_is_read(tmp_path: Path) -> None:
    (tmp_path / "path").mkdir()
    (tmp_path / "path" / "update.py").write_text("def f():\n    pass\n")
    assert changes(MIXED, str(tmp_path)) == [
        FileChange("path/add.py", "abc\ndef\n"),
        FileChange("path/delete.py", None),
        FileChange("path/update2.py", "def f():\n    return 123\n"),  # the moved file's text
        FileChange("path/update.py", None),                            # and the old name goes
    ]


def test_an_update_gives_the_whole_new_text(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("import os\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n")
    patch = ("*** Begin Patch\n*** Update File: app.py\n@@ def b():\n-    return 2\n+    return 3\n"
             "*** End Patch\n")
    assert changes(patch, str(tmp_path)) == [
        FileChange("app.py", "import os\n\ndef a():\n    return 1\n\ndef b():\n    return 3\n")]


def test_whitespace_around_markers_and_a_heredoc_wrapper_are_tolerated(tmp_path: Path) -> None:
    patch = "<<'EOF'\n *** Begin Patch \n*** Add File: a.txt\n+x\n *** End Patch\nEOF\n"
    assert changes(patch, str(tmp_path)) == [FileChange("a.txt", "x\n")]


def test_a_first_chunk_without_its_at_at_line_is_read(tmp_path: Path) -> None:
    (tmp_path / "file2.py").write_text("import foo\n")
    patch = "*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch"
    assert changes(patch, str(tmp_path)) == [FileChange("file2.py", "import foo\nbar\n")]


def test_end_of_file_and_a_pure_insertion(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\na\n")
    end = "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+z\n*** End of File\n*** End Patch"
    assert changes(end, str(tmp_path)) == [FileChange("f.txt", "a\nb\nz\n")]  # the last "a"
    insert = "*** Begin Patch\n*** Update File: f.txt\n@@\n+tail\n*** End Patch"
    assert changes(insert, str(tmp_path)) == [FileChange("f.txt", "a\nb\na\ntail\n")]


@pytest.mark.parametrize("patch, why", [
    ("", "first line"),
    ("*** Add File: a\n+x\n", "first line"),
    ("*** Begin Patch\n*** Add File: a\n+x\n", "last line"),
    ("*** Begin Patch\n*** End Patch", "no file"),
    ("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", "not a valid hunk header"),
    ("*** Begin Patch\n*** Update File: a.txt\n*** End Patch", "empty"),
    ("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n@@ x\nzzz\n*** End Patch", "unexpected"),
    ("*** Begin Patch\n*** Add File: \n+x\n*** End Patch", "not a valid hunk header"),
])
def test_what_is_not_a_patch_is_refused(patch: str, why: str) -> None:
    with pytest.raises(PatchError, match=why):
        parse(patch)


def test_an_update_that_does_not_apply_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    with pytest.raises(PatchError, match="does not apply"):
        changes("*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+three\n*** End Patch",
                str(tmp_path))
    with pytest.raises(PatchError, match="does not exist"):
        changes("*** Begin Patch\n*** Update File: b.txt\n@@\n-two\n+three\n*** End Patch",
                str(tmp_path))


def test_trailing_whitespace_differences_still_match(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x = 1   \ny = 2\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x = 1\n+x = 9\n y = 2\n*** End Patch"
    assert changes(patch, str(tmp_path)) == [FileChange("a.txt", "x = 9\ny = 2\n")]


def test_shell_forms_codex_runs_as_a_patch() -> None:
    body = "*** Begin Patch\n*** Add File: src/h.txt\n+hi\n*** End Patch"
    assert shell_patch(f"apply_patch <<'EOF'\n{body}\nEOF\n") == (body, None)
    assert shell_patch(f'applypatch <<"PATCH"\n{body}\nPATCH') == (body, None)
    assert shell_patch(f"cd sub && apply_patch <<'EOF'\n{body}\nEOF\n") == (body, "sub")
    assert shell_patch(f"cd 'my dir' && apply_patch <<EOF\n{body}\nEOF") == (body, "my dir")
    assert shell_patch("grep -rn apply_patch src/") is None  # names it, carries no patch
    assert shell_patch("echo '*** Begin Patch'") is None


def test_a_patch_in_a_shell_form_not_read_here_is_refused() -> None:
    body = "*** Begin Patch\n*** Add File: src/h.txt\n+hi\n*** End Patch"
    for command in (f"echo hi; apply_patch <<'EOF'\n{body}\nEOF", f"apply_patch '{body}'",
                    f"cat <<'EOF' | apply_patch\n{body}\nEOF"):
        with pytest.raises(PatchError, match="apply_patch tool"):
            shell_patch(command)
