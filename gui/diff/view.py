"""The diff pane: a unified or side-by-side view of one diff, with a switch between the two."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.diff.languages import language_for
from intentd.gui.diff.parse import DiffLine, parse_unified, side_by_side, stats
from intentd.gui.diff.text import DiffText

UNIFIED, SIDE_BY_SIDE = "unified", "side-by-side"


class DiffPane(QWidget):
    """Renders a diff only in the mode on screen; the other mode is rendered when chosen."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = UNIFIED
        self._lines: list[DiffLine] = []
        self._path: str | None = None
        self._rendered: set[str] = set()
        self.title = QLabel(self)
        self.summary = QLabel(self)
        self.unified_button = self._mode_button("&Unified", UNIFIED)
        self.side_button = self._mode_button("Side &by side", SIDE_BY_SIDE)
        self.unified_button.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.unified_button)
        group.addButton(self.side_button)
        self.unified = DiffText(self, unified=True)
        self.old = DiffText(self, unified=False)
        self.new = DiffText(self, unified=False)
        self.old.setAccessibleName("Old version")
        self.new.setAccessibleName("New version")
        self.old.verticalScrollBar().valueChanged.connect(self.new.verticalScrollBar().setValue)
        self.new.verticalScrollBar().valueChanged.connect(self.old.verticalScrollBar().setValue)
        split = QSplitter(self)
        split.addWidget(self.old)
        split.addWidget(self.new)
        self.empty = QLabel("No diff to show.", self)
        self.stack = QStackedWidget(self)
        for widget in (self.unified, split, self.empty):
            self.stack.addWidget(widget)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.title, 1)
        header.addWidget(self.summary)
        header.addWidget(self.unified_button)
        header.addWidget(self.side_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.stack, 1)
        self.set_diff(None)

    def _mode_button(self, text: str, mode: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setCheckable(True)
        button.setAutoRaise(True)
        button.clicked.connect(lambda: self.set_mode(mode))
        return button

    def set_diff(self, text: str | None, path: str | None = None, title: str = "") -> None:
        """Show `text` (a unified diff; None or empty: nothing); `path` picks the language."""
        self._lines = parse_unified(text) if text else []
        self._path = path
        self._rendered = set()
        self.title.setText(title)
        added, removed = stats(self._lines)
        self.summary.setText(f"+{added} −{removed}" if self._lines else "")
        self._render()

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self.unified_button.setChecked(mode == UNIFIED)
        self.side_button.setChecked(mode == SIDE_BY_SIDE)
        self._render()

    def toggle_mode(self) -> None:
        self.set_mode(SIDE_BY_SIDE if self.mode == UNIFIED else UNIFIED)

    def _render(self) -> None:
        if not self._lines:
            self.stack.setCurrentWidget(self.empty)
            return
        language = language_for(self._path)
        if self.mode not in self._rendered:
            if self.mode == UNIFIED:
                self.unified.set_lines(self._lines, language)
            else:
                left, right = side_by_side(self._lines)
                self.old.set_lines(left, language)
                self.new.set_lines(right, language)
            self._rendered.add(self.mode)
        self.stack.setCurrentIndex(0 if self.mode == UNIFIED else 1)
