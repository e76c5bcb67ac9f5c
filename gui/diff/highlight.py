"""Syntax colours for the code inside a diff, computed per line when the line comes into view."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextLayout

from intentd.gui.diff.languages import Language, language_for
from intentd.gui.diff.parse import DiffLine, Kind, new_path
from intentd.gui.theme import Colors

_CODE = (Kind.CONTEXT, Kind.ADDED, Kind.REMOVED)


def languages_per_line(lines: list[DiffLine], default: Language | None) -> list[Language | None]:
    """The language of each line: a file header (`+++ b/x.py`) sets it for the lines after it."""
    current = default
    result: list[Language | None] = []
    for line in lines:
        if line.kind == Kind.HEADER:
            path = new_path(line.text)
            if path is not None:
                current = language_for(path)
        result.append(current)
    return result


def token_spans(text: str, language: Language | None, start: int = 0) -> list[tuple[int, int, str]]:
    """(start, length, group) of each keyword, string, comment and number in one line.

    Per line on purpose: a string or comment spanning lines is coloured on its first line only,
    which is enough to read a diff and keeps each line independent (so it can be done lazily).
    """
    if language is None:
        return []
    return [(m.start(), m.end() - m.start(), m.lastgroup or "")
            for m in language.pattern.finditer(text, start) if m.lastgroup]


class LineFormats:
    """Turns a diff line into the QTextLayout format ranges that colour it."""

    def __init__(self, palette: Colors) -> None:
        def fmt(color: QColor, bold: bool = False, italic: bool = False) -> QTextCharFormat:
            char_format = QTextCharFormat()
            char_format.setForeground(color)
            if bold:
                char_format.setFontWeight(QFont.Weight.Bold)
            if italic:
                char_format.setFontItalic(True)
            return char_format

        self._formats = {"keyword": fmt(palette.keyword, bold=True),
                         "string": fmt(palette.string),
                         "comment": fmt(palette.comment, italic=True),
                         "number": fmt(palette.number)}
        self._header = fmt(palette.gutter_fg, bold=True)
        self._hunk = fmt(palette.number)

    def ranges(self, line: DiffLine, text: str, language: Language | None,
               prefixed: bool) -> list[QTextLayout.FormatRange]:
        if line.kind == Kind.HEADER:
            return [self._range(0, len(text), self._header)]
        if line.kind == Kind.HUNK:
            return [self._range(0, len(text), self._hunk)]
        if line.kind not in _CODE:
            return []
        return [self._range(start, length, self._formats[group])
                for start, length, group in token_spans(text, language, 1 if prefixed else 0)]

    @staticmethod
    def _range(start: int, length: int, char_format: QTextCharFormat) -> QTextLayout.FormatRange:
        span = QTextLayout.FormatRange()
        span.start, span.length, span.format = start, length, char_format
        return span
