"""A file's lines by intent: which intent, session and call last wrote each line, or `-`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QComboBox, QLabel, QTableView, QVBoxLayout, QWidget

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection, RpcFailure

COLUMNS = ("Line", "Intent", "Session", "Call", "Text")
Index = QModelIndex | QPersistentModelIndex


class BlameModel(QAbstractTableModel):
    """Rows are the file's lines; the authors come from `trace/blame`, the text from the file."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, dict[str, Any] | None]] = []

    def set_blame(self, text: str, answer: dict[str, Any]) -> None:
        lines = _lines(text)
        authors: list[dict[str, Any] | None] = [None] * len(lines)
        for first, last, at in answer.get("runs", []):
            for number in range(first, min(last, len(lines)) + 1):
                authors[number - 1] = answer["authors"][at] if at is not None else None
        self.beginResetModel()
        self.rows = list(zip(lines, authors, strict=True))
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's API
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole,
                                               Qt.ItemDataRole.ToolTipRole):
            return None
        text, author = self.rows[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return _describe(author)
        return (str(index.row() + 1), _intent(author), (author or {}).get("session") or "-",
                (author or {}).get("call_id") or "-", text)[index.column()]


def _intent(author: dict[str, Any] | None) -> str:
    if author is None:
        return "-"
    name = author.get("intent_name")
    return f"{author.get('intent_id') or '(none)'}" + (f" {name}" if name else "")


def _describe(author: dict[str, Any] | None) -> str:
    if author is None:
        return "No agent wrote this line, or it was changed by hand since"
    return (f"{author.get('tool')} by {author.get('agent')} at {author.get('time')}, "
            f"session {author.get('session')}, intent {_intent(author)}")


class BlameView(QWidget):
    """Opened from a checkpoint: its files to choose from, each shown line by line."""

    def __init__(self, connection: DaemonConnection, workspace: str, files: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("Lines by intent")
        self.connection, self.workspace = connection, workspace
        self.model = BlameModel(self)
        self.files = QComboBox(self)
        self.files.setAccessibleName("File")
        self.files.addItems(files)
        self.files.currentTextChanged.connect(self._on_files_current_text_changed)
        self.status = QLabel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setAccessibleName("Lines by intent")
        self.table.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.files)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        self.resize(900, 600)
        self._asked: str | None = None
        if files:
            self.load(files[0])

    def load(self, relative: str) -> None:
        """Ask the daemon for the authors; the answer arrives later (no waiting on the UI)."""
        self._asked = relative
        self.status.setText(f"Loading {relative}…")
        params = {"workspace": self.workspace, "path": relative}
        self.connection.request(protocol.TRACE_BLAME, params,
                                lambda answer: self._on_blame(relative, answer),
                                lambda failure: self._on_failure(relative, failure))

    def _on_files_current_text_changed(self, relative: str) -> None:
        if relative:
            self.load(relative)

    def _on_blame(self, relative: str, answer: Any) -> None:
        if relative != self._asked or not isinstance(answer, dict):
            return
        try:
            text = (Path(self.workspace) / relative).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.status.setText(f"Cannot read {relative}: {exc.strerror or exc}")
            return
        if len(_lines(text)) != answer.get("lines"):
            self.load(relative)  # changed between the answer and the read: ask again
            return
        self.model.set_blame(text, answer)
        written = sum(last - first + 1 for first, last, at in answer["runs"] if at is not None)
        self.status.setText(f"{relative}: {written} of {answer['lines']} line(s) written by "
                            f"agents; “-” means no agent, or changed by hand since")

    def _on_failure(self, relative: str, failure: RpcFailure) -> None:
        if relative == self._asked:
            self.status.setText(f"Cannot show {relative}: {failure.message}")


def _lines(text: str) -> list[str]:
    """Lines as the daemon counts them: split at \\n only (not at \\r, \\f or \\u2028)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]
