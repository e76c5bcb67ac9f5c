"""A read-only view of diff lines: full-width line colours, a line-number gutter, lazy tokens."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from intentd.gui.diff.highlight import LineFormats, languages_per_line
from intentd.gui.diff.languages import Language
from intentd.gui.diff.parse import DiffLine, Kind
from intentd.gui.theme import colors


class _Gutter(QWidget):
    def __init__(self, view: DiffText) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self) -> QSize:
        return QSize(self._view.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._view.paint_gutter(self, event)


class DiffText(QPlainTextEdit):
    """Shows DiffLines. Only what is on screen costs Python time: line colours are painted for
    the visible lines, and tokens are coloured when a line first comes into view, so a long diff
    renders as fast as Qt lays out its plain text."""

    def __init__(self, parent: QWidget | None = None, *, unified: bool = True) -> None:
        super().__init__(parent)
        self.unified = unified  # unified: prefixes kept, two numbers in the gutter
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard
                                     | Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._lines: list[DiffLine] = []
        self._languages: list[Language | None] = []
        self._formatted = bytearray()  # 1 for each line whose tokens are coloured
        self._formatting = False
        self._language: Language | None = None
        self._numbers: list[str] = []
        self._gutter_chars = 0
        self._colors = colors(self.palette())
        self._formats = LineFormats(self._colors)
        self._gutter = _Gutter(self)
        self.updateRequest.connect(self._on_self_update_request)

    def set_lines(self, lines: list[DiffLine], language: Language | None = None) -> None:
        self._lines = lines
        self._language = language
        self._languages = languages_per_line(lines, language)
        self._formatted = bytearray(len(lines))
        width = len(str(max((max(line.old_no or 0, line.new_no or 0) for line in lines),
                            default=0)))
        if self.unified:
            self._numbers = [f"{_num(line.old_no, width)} {_num(line.new_no, width)}"
                             for line in lines]
        else:
            self._numbers = [_num(line.old_no if line.old_no is not None else line.new_no, width)
                             for line in lines]
        self._gutter_chars = max((len(n) for n in self._numbers), default=0)
        self.setPlainText("\n".join(line.text if self.unified else line.body for line in lines))
        self._update_margins()
        self._format_visible()

    def formatted_lines(self) -> int:
        return sum(self._formatted)

    # -- lazy token colours -------------------------------------------------------------------
    def _format_visible(self) -> None:
        if self._formatting:  # marking the document dirty below asks for updates again
            return
        self._formatting = True
        try:
            first, end = self._format_blocks_on_screen()
            if first < end:
                self.document().markContentsDirty(first, end - first)  # one relayout for all
        finally:
            self._formatting = False

    def _format_blocks_on_screen(self) -> tuple[int, int]:
        """Colour the tokens of visible lines not done yet; the document range they span."""
        first, end = -1, -1
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        bottom = self.viewport().height()
        while block.isValid():
            if self.blockBoundingGeometry(block).translated(offset).top() > bottom:
                break
            number = block.blockNumber()
            if number < len(self._lines) and not self._formatted[number]:
                self._formatted[number] = 1
                ranges = self._formats.ranges(self._lines[number], block.text(),
                                              self._languages[number], self.unified)
                if ranges:
                    block.layout().setFormats(ranges)
                    first = block.position() if first < 0 else first
                    end = block.position() + block.length()
            block = block.next()
        return first, end

    # -- painting ----------------------------------------------------------------------------
    def gutter_width(self) -> int:
        if not self._gutter_chars:
            return 0
        return self.fontMetrics().horizontalAdvance("9" * (self._gutter_chars + 2))

    def _background(self, kind: Kind) -> QColor | None:
        palette = self._colors
        return {Kind.ADDED: palette.added_bg, Kind.REMOVED: palette.removed_bg,
                Kind.HUNK: palette.hunk_bg, Kind.FILLER: palette.filler_bg}.get(kind)

    def paintEvent(self, event: QPaintEvent) -> None:
        # QPlainTextEdit paints no background of its own over the viewport, so line colours
        # painted first stay under the text.
        painter = QPainter(self.viewport())
        width = self.viewport().width()
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        bottom = event.rect().bottom()
        while block.isValid():
            rect = self.blockBoundingGeometry(block).translated(offset)
            if rect.top() > bottom:
                break
            number = block.blockNumber()
            color = self._background(self._lines[number].kind) \
                if number < len(self._lines) else None
            if color is not None:
                painter.fillRect(QRect(0, int(rect.top()), width, int(rect.height()) + 1), color)
            block = block.next()
        painter.end()
        super().paintEvent(event)

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        painter.fillRect(event.rect(), self.palette().color(self.palette().ColorRole.Window))
        painter.setPen(self._colors.gutter_fg)
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        height = self.fontMetrics().height()
        right = gutter.width() - self.fontMetrics().horizontalAdvance("9")
        while block.isValid():
            top = self.blockBoundingGeometry(block).translated(offset).top()
            if top > event.rect().bottom():
                break
            number = block.blockNumber()
            if number < len(self._numbers):
                painter.drawText(0, int(top), right, height, Qt.AlignmentFlag.AlignRight,
                                 self._numbers[number])
            block = block.next()
        painter.end()

    # -- geometry and palette ----------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._update_margins()
        self._format_visible()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._lines:
            self._colors = colors(self.palette())
            self._formats = LineFormats(self._colors)
            self.set_lines(self._lines, self._language)

    def _update_margins(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)
        rect = self.contentsRect()
        self._gutter.setGeometry(QRect(rect.left(), rect.top(), self.gutter_width(),
                                       rect.height()))

    def _on_self_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
        self._format_visible()


def _num(value: int | None, width: int) -> str:
    return str(value).rjust(width) if value is not None else " " * width
