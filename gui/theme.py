"""Colours that follow the desktop's light or dark palette (never a palette of our own)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from PySide6.QtGui import QColor, QGuiApplication, QPalette


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


@dataclass(frozen=True)
class Colors:
    added_bg: QColor
    removed_bg: QColor
    hunk_bg: QColor
    filler_bg: QColor
    gutter_fg: QColor
    keyword: QColor
    string: QColor
    comment: QColor
    number: QColor
    allow: QColor
    deny: QColor
    ask: QColor
    warning_bg: QColor
    warning_fg: QColor
    ok: QColor
    busy: QColor
    bad: QColor


_LIGHT = {
    "added_bg": "#e6ffec", "removed_bg": "#ffebe9", "hunk_bg": "#ddf4ff", "filler_bg": "#f3f4f6",
    "gutter_fg": "#6e7781", "keyword": "#cf222e", "string": "#0a3069", "comment": "#6e7781",
    "number": "#0550ae", "allow": "#1a7f37", "deny": "#cf222e", "ask": "#9a6700",
    "warning_bg": "#fff8c5", "warning_fg": "#4d2d00", "ok": "#1a7f37", "busy": "#9a6700",
    "bad": "#cf222e",
}
_DARK = {
    "added_bg": "#12361f", "removed_bg": "#4a1d21", "hunk_bg": "#132c48", "filler_bg": "#22262c",
    "gutter_fg": "#8b949e", "keyword": "#ff7b72", "string": "#a5d6ff", "comment": "#8b949e",
    "number": "#79c0ff", "allow": "#3fb950", "deny": "#f85149", "ask": "#d29922",
    "warning_bg": "#3b2e0a", "warning_fg": "#f0d890", "ok": "#3fb950", "busy": "#d29922",
    "bad": "#f85149",
}


def colors(palette: QPalette | None = None) -> Colors:
    """The colours for the palette's brightness; shared, so callers must not change them."""
    return _colors(is_dark(palette))


@cache
def _colors(dark: bool) -> Colors:
    # Built once per brightness: an item model asks for a colour on every cell it paints.
    table = _DARK if dark else _LIGHT
    return Colors(**{name: QColor(value) for name, value in table.items()})
