"""Table view settings shared by every pane: whole rows, one at a time, cheap for many rows."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget


def make_table(parent: QWidget, name: str, model: QAbstractItemModel,
               widths: tuple[int, ...] = ()) -> QTableView:
    table = QTableView(parent)
    table.setModel(model)  # before the widths: a header without columns ignores them
    table.setObjectName(name)
    table.setAccessibleName(name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.setTabKeyNavigation(False)  # Tab leaves the table, arrows move in it
    table.verticalHeader().hide()
    # Fixed row heights: the view never measures every row, so thousands of rows stay cheap.
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(True)
    for column, width in enumerate(widths):
        header.resizeSection(column, width)
    return table
