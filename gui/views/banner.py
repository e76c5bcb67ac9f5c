"""A coloured strip across the top of a pane, for something the person should act on."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from intentd.gui.theme import colors


class Banner(QFrame):
    """Hidden until show_message(); an optional button emits action_clicked."""

    action_clicked = Signal()

    def __init__(self, action_text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.button = QPushButton(action_text, self)
        self.button.setVisible(bool(action_text))
        self.button.clicked.connect(self.action_clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        self._apply_colors()
        self.hide()

    def show_message(self, text: str) -> None:
        self.label.setText(text)
        self.show()

    def text(self) -> str:
        return self.label.text()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ApplicationPaletteChange:
            self._apply_colors()

    def _apply_colors(self) -> None:
        theme = colors()
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Window, theme.warning_bg)
        palette.setColor(QPalette.ColorRole.WindowText, theme.warning_fg)
        self.setPalette(palette)
