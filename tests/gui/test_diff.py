"""Diff parsing, side-by-side pairing, token colours, and the diff widgets."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from intentd.gui.diff.highlight import languages_per_line, token_spans
from intentd.gui.diff.languages import C_LIKE, PYTHON, language_for
from intentd.gui.diff.parse import Kind, new_path, parse_unified, side_by_side, stats
from intentd.gui.diff.text import DiffText
from intentd.gui.diff.view import SIDE_BY_SIDE, UNIFIED, DiffPane

DIFF = """--- a/src/x.py
+++ b/src/x.py
@@ -1,4 +1,5 @@
 def answer():
-    return 41
-    # old
+    return 42  # new
+
+print("#not a comment")
 end
\\ No newline at end of file
"""


def big_diff(lines: int) -> str:
    out = ["--- a/big.py", "+++ b/big.py"]
    while len(out) < lines:
        n = len(out)
        out += [f"@@ -{n},3 +{n},3 @@", f" x = {n}", f"-y = '{n}'", f"+y = \"{n}\"  # was"]
    return "\n".join(out) + "\n"


def test_parse_gives_kinds_and_line_numbers() -> None:
    lines = parse_unified(DIFF)
    kinds = [line.kind for line in lines]
    assert kinds == [Kind.HEADER, Kind.HEADER, Kind.HUNK, Kind.CONTEXT, Kind.REMOVED,
                     Kind.REMOVED, Kind.ADDED, Kind.ADDED, Kind.ADDED, Kind.CONTEXT, Kind.NOTE]
    assert (lines[3].old_no, lines[3].new_no) == (1, 1)
    assert (lines[5].old_no, lines[5].new_no) == (3, None)
    assert (lines[8].old_no, lines[8].new_no) == (None, 4)
    assert (lines[9].old_no, lines[9].new_no) == (4, 5)
    assert lines[4].body == "    return 41"
    assert stats(lines) == (3, 2)


def test_side_by_side_faces_removals_with_additions_and_fills_the_rest() -> None:
    left, right = side_by_side(parse_unified(DIFF))
    assert len(left) == len(right)
    pairs = [(a.kind, b.kind) for a, b in zip(left, right, strict=True)]
    assert pairs[3:6] == [(Kind.REMOVED, Kind.ADDED), (Kind.REMOVED, Kind.ADDED),
                          (Kind.FILLER, Kind.ADDED)]
    assert left[2].body == right[2].body == "def answer():"


def test_side_by_side_shows_each_header_once_on_its_own_side() -> None:
    left, right = side_by_side(parse_unified(DIFF + "--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n"))
    texts = [(a.text, b.text) for a, b in zip(left, right, strict=True)]
    assert texts[0] == ("--- a/src/x.py", "+++ b/src/x.py")
    assert ("--- a/y.py", "+++ b/y.py") in texts
    assert sum(text.startswith(("---", "+++")) for pair in texts for text in pair) == 4


def test_header_paths_and_languages() -> None:
    assert new_path("+++ b/src/x.py") == "src/x.py"
    assert new_path("--- /dev/null") is None
    assert new_path("@@ -1 +1 @@") is None
    assert language_for("a/b.py") is PYTHON
    assert language_for("main.rs") is C_LIKE
    assert language_for("notes.txt") is None
    two_files = parse_unified("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
                              "--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-x\n+y\n")
    languages = languages_per_line(two_files, None)
    assert languages[3] is PYTHON and languages[-1] is C_LIKE


def test_token_spans_know_strings_from_comments() -> None:
    text = '+print("#not a comment")  # a comment'
    groups = {text[start:start + length]: group
              for start, length, group in token_spans(text, PYTHON, 1)}
    assert groups == {'"#not a comment"': "string", "# a comment": "comment"}
    assert token_spans("+anything", None, 1) == []


def test_diff_text_colours_tokens_of_visible_lines_only(qtbot: QtBot) -> None:
    view = DiffText(unified=True)
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    qtbot.waitExposed(view)
    lines = parse_unified(big_diff(5000))
    view.set_lines(lines, None)
    assert view.document().blockCount() == len(lines)
    assert 0 < view.formatted_lines() < 200  # a screenful, not 5,000 lines
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    qtbot.waitUntil(lambda: view.formatted_lines() >= 2 * 10)
    last = view.document().lastBlock()
    assert last.layout().formats(), "the last line got its colours once scrolled to"


def test_diff_pane_switches_between_unified_and_side_by_side(qtbot: QtBot) -> None:
    pane = DiffPane()
    qtbot.addWidget(pane)
    pane.show()
    assert pane.stack.currentWidget() is pane.empty
    pane.set_diff(DIFF, "src/x.py", "src/x.py")
    assert pane.mode == UNIFIED and pane.stack.currentWidget() is pane.unified
    assert pane.unified.toPlainText().splitlines()[4] == "-    return 41"
    assert pane.summary.text() == "+3 −2"
    pane.toggle_mode()
    assert pane.mode == SIDE_BY_SIDE and pane.side_button.isChecked()
    old, new = pane.old.toPlainText().splitlines(), pane.new.toPlainText().splitlines()
    assert len(old) == len(new)
    assert old[3] == "    return 41" and new[3] == "    return 42  # new"
    assert (old[0], new[0]) == ("--- a/src/x.py", "+++ b/src/x.py"), "each header once"
    pane.new.verticalScrollBar().setValue(1)
    assert pane.old.verticalScrollBar().value() == pane.new.verticalScrollBar().value()
    pane.set_diff(None)
    assert pane.stack.currentWidget() is pane.empty
