"""The app's icon, drawn at run time (no image files to ship), with an optional pending count."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPainterPath, QPixmap

SIZE = 64


def app_icon(pending: int = 0) -> QIcon:
    pixmap = QPixmap(SIZE, SIZE)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    # A shield: the daemon stands between the agent and the machine.
    shield = QPainterPath()
    shield.moveTo(32, 4)
    shield.lineTo(58, 14)
    shield.cubicTo(58, 38, 46, 54, 32, 60)
    shield.cubicTo(18, 54, 6, 38, 6, 14)
    shield.closeSubpath()
    painter.fillPath(shield, QColor("#2f6feb"))
    painter.setPen(QColor("white"))
    font = QFont()
    font.setBold(True)
    font.setPixelSize(34)
    painter.setFont(font)
    painter.drawText(QRectF(6, 6, 52, 48), Qt.AlignmentFlag.AlignCenter, "i")
    if pending:
        badge = QRectF(SIZE - 30, SIZE - 30, 29, 29)
        painter.setBrush(QColor("#cf222e"))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawEllipse(badge)
        painter.setPen(QColor("white"))
        font.setPixelSize(18 if pending < 10 else 14)
        painter.setFont(font)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter,
                         str(pending) if pending < 100 else "99+")
    painter.end()
    return QIcon(pixmap)
